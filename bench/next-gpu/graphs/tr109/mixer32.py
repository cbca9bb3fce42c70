# Probe: the mixer_token_residual fixture at timm mixer_b16's batch (32).
import torch
import torch.nn as nn


class Model(nn.Module):
    """An MLP-Mixer block's token mixing: the residual add of the
    transposed token-MLP output, then the channel LayerNorm and the
    next residual add, which reads the sum again."""

    def __init__(self, tokens=196, dim=768, hidden=384):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(tokens, hidden)
        self.fc2 = nn.Linear(hidden, tokens)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.fc3 = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.norm1(x).transpose(1, 2)
        y = self.fc2(torch.nn.functional.gelu(self.fc1(y))).transpose(1, 2)
        x = x + y
        return x + self.fc3(self.norm2(x))


def get_inputs():
    return [torch.randn(32, 196, 768)]


def get_init_inputs():
    return []
