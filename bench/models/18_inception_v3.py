# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# torchvision Inception-v3 (asymmetric 1x7/7x1 convs, cat), no auxiliary
# head, batch 32 at 299x299. Random weights; dropout and stochastic depth off; training
# mode as KernelBench evaluates (batch norm uses batch statistics).
import torch
import torch.nn as nn
import torchvision


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=False,
                                                     dropout=0.0)
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
    return [torch.randn(32, 3, 299, 299)]


def get_init_inputs():
    return []
