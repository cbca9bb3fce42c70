# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# torchvision video ResNet-3D 18 (Conv3d + BatchNorm3d), batch 8 clips of
# 16 frames at 112x112. Random weights; dropout and stochastic depth off; training
# mode as KernelBench evaluates (batch norm uses batch statistics).
import torch
import torch.nn as nn
import torchvision


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.video.r3d_18(weights=None)
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
    return [torch.randn(8, 3, 16, 112, 112)]


def get_init_inputs():
    return []
