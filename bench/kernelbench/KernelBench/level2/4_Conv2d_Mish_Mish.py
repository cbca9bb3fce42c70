# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Conv2d followed by two Mish activations."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return F.mish(F.mish(self.conv(x)))


def get_inputs():
    return [torch.randn(64, 64, 256, 256)]


def get_init_inputs():
    return [64, 128, 3]
