# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Transposed conv, 2x2 max pool, hardtanh, spatial mean, tanh."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                 maxpool_kernel_size, maxpool_stride, hardtanh_min, hardtanh_max):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.maxpool = nn.MaxPool2d(kernel_size=maxpool_kernel_size,
                                    stride=maxpool_stride)
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)

    def forward(self, x):
        x = self.hardtanh(self.maxpool(self.conv_transpose(x)))
        x = torch.mean(x, dim=(2, 3), keepdim=True)
        return torch.tanh(x)


def get_inputs():
    return [torch.randn(128, 64, 256, 256)]


def get_init_inputs():
    return [64, 64, 3, 1, 1, 2, 2, -1, 1]
