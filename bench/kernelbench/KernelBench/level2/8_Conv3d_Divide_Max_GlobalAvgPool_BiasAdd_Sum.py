# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv3d, divide, max pool, global average pool, bias, sum over C."""

    def __init__(self, in_channels, out_channels, kernel_size, divisor,
                 pool_size, bias_shape, sum_dim):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.divisor = divisor
        self.max_pool = nn.MaxPool3d(pool_size)
        self.global_avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.sum_dim = sum_dim

    def forward(self, x):
        x = self.conv(x) / self.divisor
        x = self.global_avg_pool(self.max_pool(x))
        x = x + self.bias
        return torch.sum(x, dim=self.sum_dim)


def get_inputs():
    return [torch.randn(128, 8, 16, 64, 64)]


def get_init_inputs():
    return [8, 16, 3, 2.0, (2, 2, 2), (16, 1, 1, 1), 1]
