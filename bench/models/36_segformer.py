# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# a SegFormer-B0-sized encoder (transformers SegformerModel: overlapping
# patch embeddings, efficient self-attention with a strided reduction conv,
# Mix-FFN with a depthwise conv and GELU), batch 16 at 256x256. Random weights;
# dropout and stochastic depth off; the last hidden state.
import torch
import torch.nn as nn
import transformers


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = transformers.SegformerConfig(
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
            classifier_dropout_prob=0.0, drop_path_rate=0.0, torchscript=True)
        self.net = transformers.SegformerModel(config)
        # Dropout and stochastic depth are random in training mode: off.
        for m in self.net.modules():
            if isinstance(m, nn.modules.dropout._DropoutNd):
                m.p = 0.0
            elif type(m).__name__ == 'StochasticDepth':  # torchvision
                m.p = 0.0
            elif hasattr(m, 'drop_prob'):  # timm's DropPath
                m.drop_prob = 0.0

    def forward(self, pixel_values):
        return self.net(pixel_values)[0]


def get_inputs():
    return [torch.randn(16, 3, 256, 256)]


def get_init_inputs():
    return []
