# Tensor constants made on the input's device: on the meta device they hold
# no values, so kb-export refuses the trace (a clear error, exit 2).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * torch.tensor(0.25, device=x.device) + torch.tensor([1.0, 2.0], device=x.device)


def get_inputs():
    return [torch.randn(3, 2)]


def get_init_inputs():
    return []
