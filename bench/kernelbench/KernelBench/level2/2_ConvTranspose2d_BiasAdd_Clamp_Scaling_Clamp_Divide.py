# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed conv, bias, clamp, scale, clamp, unscale."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                 output_padding, bias_shape, scaling_factor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride,
            padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.conv_transpose(x) + self.bias
        x = torch.clamp(x, min=0.0, max=1.0)
        x = x * self.scaling_factor
        x = torch.clamp(x, min=0.0, max=1.0)
        return x / self.scaling_factor


def get_inputs():
    return [torch.randn(128, 64, 128, 128)]


def get_init_inputs():
    return [64, 64, 3, 2, 1, 1, (64, 1, 1), 2.0]
