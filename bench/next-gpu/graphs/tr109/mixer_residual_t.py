# Probe: timm mixer_b16's token-mixing residual as the model has it: the
# residual stream keeps PatchEmbed's transposed layout (strides [150528, 1,
# 196]), so the sum of it and the transposed token-MLP output is stored
# transposed while its LayerNorm's output is row-major (mixer_b16's
# kb_region_2, 0.106 ms against ATen's 0.087 in run109).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim=768):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc = nn.Linear(dim, dim)

    def forward(self, a, b):
        x = a.transpose(1, 2) + b.transpose(1, 2)
        return x + self.fc(self.norm(x))


def get_inputs():
    return [torch.randn(32, 768, 196), torch.randn(32, 768, 196)]


def get_init_inputs():
    return []
