# Probe graph (run105): training BatchNorm1d over (tokens, channels) in
# levit_128's shapes (batch 64: 196, 49 and 16 tokens), each followed by
# hardswish as kb-sink-views now fuses them.
import torch
import torch.nn as nn

SHAPES = [(12544, 128), (12544, 256), (12544, 384), (3136, 256),
          (3136, 512), (1024, 384), (1024, 768)]


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bns = nn.ModuleList([nn.BatchNorm1d(c) for _, c in SHAPES])

    def forward(self, *xs):
        return [nn.functional.hardswish(bn(x)) for bn, x in zip(self.bns, xs)]


def get_inputs():
    return [torch.randn(n, c) for n, c in SHAPES]


def get_init_inputs():
    return []
