# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Conv3d and a chain of five activations ending in a bias add."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = F.leaky_relu(x, negative_slope=0.01)
        x = F.gelu(x)
        x = torch.sigmoid(x)
        return x + self.bias


def get_inputs():
    return [torch.randn(64, 8, 32, 64, 64)]


def get_init_inputs():
    return [8, 32, 3, (32, 1, 1, 1)]
