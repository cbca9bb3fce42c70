# Probe: ConvNeXt's block after its depthwise conv (torchvision
# convnext_tiny's first stage at batch 32): the permute to channels-last,
# then LayerNorm over the 96 channels, whose elements are 3136 floats apart
# and whose consecutive rows are adjacent; then the block's first linear.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim=96):
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc = nn.Linear(dim, 4 * dim)

    def forward(self, x):
        return self.fc(self.norm(self.dw(x).permute(0, 2, 3, 1)))


def get_inputs():
    return [torch.randn(32, 96, 56, 56)]


def get_init_inputs():
    return []
