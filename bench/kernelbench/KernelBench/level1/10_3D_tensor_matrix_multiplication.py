# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn


class Model(nn.Module):
    """A 3-d tensor times a matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(16, 1024, 2048), torch.randn(2048, 768)]


def get_init_inputs():
    return []
