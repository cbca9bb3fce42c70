# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# torchvision ResNeXt-50 32x4d (grouped 3x3 convs), batch 32. Random weights; dropout and stochastic depth off; training
# mode as KernelBench evaluates (batch norm uses batch statistics).
import torch
import torch.nn as nn
import torchvision


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.resnext50_32x4d(weights=None)
        # Dropout and stochastic depth are random in training mode: off.
        for m in self.net.modules():
            if isinstance(m, nn.modules.dropout._DropoutNd):
                m.p = 0.0
            elif type(m).__name__ == 'StochasticDepth':  # torchvision
                m.p = 0.0
            elif hasattr(m, 'drop_prob'):  # timm's DropPath
                m.drop_prob = 0.0

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(32, 3, 224, 224)]


def get_init_inputs():
    return []
