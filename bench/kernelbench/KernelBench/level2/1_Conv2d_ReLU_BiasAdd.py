# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d, then ReLU, then a learned per-channel bias."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.relu(self.conv(x)) + self.bias


def get_inputs():
    return [torch.randn(128, 64, 128, 128)]


def get_init_inputs():
    return [64, 128, 3, (128, 1, 1)]
