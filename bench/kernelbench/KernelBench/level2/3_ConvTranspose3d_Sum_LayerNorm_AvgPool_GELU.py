# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn


class Model(nn.Module):
    """3-d transposed conv, + a learned scalar, LayerNorm over W, pool, GELU."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                 output_padding, sum_weight, norm_shape, pool_kernel_size):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride,
            padding=padding, output_padding=output_padding)
        self.sum_weight = nn.Parameter(torch.tensor(sum_weight))
        self.norm = nn.LayerNorm(norm_shape)
        self.avg_pool = nn.AvgPool3d(kernel_size=pool_kernel_size)
        self.gelu = nn.GELU()

    def forward(self, x):
        x = self.conv_transpose(x) + self.sum_weight
        x = self.norm(x)
        x = self.avg_pool(x)
        return self.gelu(x)


def get_inputs():
    return [torch.randn(32, 32, 16, 32, 32)]


def get_init_inputs():
    return [32, 64, 3, 2, 1, 1, 1.0, (64,), 2]
