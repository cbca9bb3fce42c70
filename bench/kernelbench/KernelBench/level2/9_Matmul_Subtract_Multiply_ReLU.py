# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear, subtract a constant, multiply by a constant, ReLU."""

    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x):
        x = self.linear(x) - self.subtract_value
        return torch.relu(x * self.multiply_value)


def get_inputs():
    return [torch.randn(1024, 8192)]


def get_init_inputs():
    return [8192, 8192, 2.0, 1.5]
