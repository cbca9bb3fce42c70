# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix times a Python float passed to forward."""

    def __init__(self):
        super().__init__()

    def forward(self, A, s):
        return A * s


def get_inputs():
    return [torch.randn(65536, 16384), 3.14]


def get_init_inputs():
    return []
