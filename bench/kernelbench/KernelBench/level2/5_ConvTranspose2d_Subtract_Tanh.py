# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed conv, subtract a learned bias, tanh."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape,
                 stride=2, padding=1, output_padding=1):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride,
            padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.tanh(self.conv_transpose(x) - self.bias)


def get_inputs():
    return [torch.randn(32, 64, 256, 256)]


def get_init_inputs():
    return [64, 64, 4, (64, 1, 1)]
