# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# torchvision RegNetY-800MF (grouped convs, squeeze-excitation), batch 32. Random weights; dropout and stochastic depth off; training
# mode as KernelBench evaluates (batch norm uses batch statistics).
import torch
import torch.nn as nn
import torchvision


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.regnet_y_800mf(weights=None)

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(32, 3, 224, 224)]


def get_init_inputs():
    return []
