# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# timm ResMLP-12 (cross-patch linear layers on the transposed tokens, Affine
# norms, GELU MLPs; never measured before session 57),
# batch 32. Random weights; dropout and stochastic depth off; training
# mode as KernelBench evaluates (batch norm uses batch statistics).
import torch
import torch.nn as nn
import timm


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = timm.create_model('resmlp_12_224', pretrained=False)
        # Dropout and stochastic depth are random in training mode: off.
        for m in self.net.modules():
            if isinstance(m, nn.modules.dropout._DropoutNd):
                m.p = 0.0
            elif type(m).__name__ == 'StochasticDepth':  # torchvision
                m.p = 0.0
            elif hasattr(m, 'drop_prob'):  # timm's DropPath
                m.drop_prob = 0.0

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(32, 3, 224, 224)]


def get_init_inputs():
    return []
