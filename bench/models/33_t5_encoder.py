# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# a T5-small-sized encoder (transformers T5EncoderModel: RMS-style
# T5LayerNorm, ReLU feed-forward, relative position bias), batch 16 x 256 tokens.
# Random weights; dropout off; the last hidden state.
import torch
import torch.nn as nn
import transformers


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = transformers.T5Config(
            vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_heads=8,
            dropout_rate=0.0, use_cache=False, is_encoder_decoder=False, torchscript=True)
        self.net = transformers.T5EncoderModel(config)
        # Dropout and stochastic depth are random in training mode: off.
        for m in self.net.modules():
            if isinstance(m, nn.modules.dropout._DropoutNd):
                m.p = 0.0
            elif type(m).__name__ == 'StochasticDepth':  # torchvision
                m.p = 0.0
            elif hasattr(m, 'drop_prob'):  # timm's DropPath
                m.drop_prob = 0.0

    def forward(self, input_ids):
        return self.net(input_ids=input_ids)[0]


def get_inputs():
    return [torch.randint(0, 32128, (16, 256))]


def get_init_inputs():
    return []
