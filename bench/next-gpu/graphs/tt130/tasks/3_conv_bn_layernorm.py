import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 64, 3)
        self.bn = nn.BatchNorm2d(64)
        self.ln = nn.LayerNorm(62)
    def forward(self, x):
        return self.ln(self.bn(self.conv(x)))

def get_inputs():
    return [torch.randn(16, 16, 64, 64)]

def get_init_inputs():
    return []
