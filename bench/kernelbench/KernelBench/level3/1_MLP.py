# In-house KernelBench-format task (written from the task description).
import torch
import torch.nn as nn


class Model(nn.Module):
    """MLP: Linear + ReLU layers."""

    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers, width = [], input_size
        for size in layer_sizes:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        layers.append(nn.Linear(width, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


def get_inputs():
    return [torch.randn(128, 16384)]


def get_init_inputs():
    return [16384, [16384, 16384], 8192]
