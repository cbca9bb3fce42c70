# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# torchvision ConvNeXt-Tiny (depthwise 7x7, LayerNorm), batch 16. Random weights; dropout and stochastic depth off; training
# mode as KernelBench evaluates (batch norm uses batch statistics).
import torch
import torch.nn as nn
import torchvision


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.convnext_tiny(weights=None, stochastic_depth_prob=0.0)

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(16, 3, 224, 224)]


def get_init_inputs():
    return []
