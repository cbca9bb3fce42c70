# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix times a column vector (memory bound)."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(2048, 1048576), torch.randn(1048576, 1)]


def get_init_inputs():
    return []
