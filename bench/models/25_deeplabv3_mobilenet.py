# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# torchvision DeepLabV3 with a MobileNetV3-Large backbone (dilated
# convs, ASPP with a global pool, bilinear upsampling), batch 8 at 320x320, the
# 'out' map. Random weights; dropout and stochastic depth off; training
# mode as KernelBench evaluates (batch norm uses batch statistics).
import torch
import torch.nn as nn
import torchvision


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
            weights=None, weights_backbone=None, aux_loss=False)
        # Dropout and stochastic depth are random in training mode: off.
        for m in self.net.modules():
            if isinstance(m, nn.modules.dropout._DropoutNd):
                m.p = 0.0
            elif type(m).__name__ == 'StochasticDepth':  # torchvision
                m.p = 0.0
            elif hasattr(m, 'drop_prob'):  # timm's DropPath
                m.drop_prob = 0.0

    def forward(self, x):
        return self.net(x)['out']


def get_inputs():
    return [torch.randn(8, 3, 320, 320)]


def get_init_inputs():
    return []
