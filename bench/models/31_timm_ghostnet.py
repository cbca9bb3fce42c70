# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# timm GhostNet 1.0 (ghost modules: cheap depthwise features cat'd and
# sliced, hard-sigmoid squeeze-excite), batch 64. Random weights; dropout and stochastic depth off; training
# mode as KernelBench evaluates (batch norm uses batch statistics).
import torch
import torch.nn as nn
import timm


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = timm.create_model('ghostnet_100', pretrained=False, drop_rate=0.0)
        # (its head's dropout is functional, F.dropout(p=drop_rate): no module to turn off)
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
    return [torch.randn(64, 3, 224, 224)]


def get_init_inputs():
    return []
