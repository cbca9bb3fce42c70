# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# timm ResNet-50-D (deep stem, avg-pool downsample), batch 32. Random weights; dropout and stochastic depth off; training
# mode as KernelBench evaluates (batch norm uses batch statistics).
import torch
import torch.nn as nn
import timm


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = timm.create_model('resnet50d', pretrained=False, drop_rate=0.0, drop_path_rate=0.0)

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(32, 3, 224, 224)]


def get_init_inputs():
    return []
