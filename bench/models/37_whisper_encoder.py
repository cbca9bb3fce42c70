# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# a Whisper-base-sized audio encoder (transformers WhisperModel's
# encoder: two Conv1d + GELU, sinusoidal positions, pre-LayerNorm blocks), batch 8
# of 80 x 3000 log-mel frames. Random weights; dropout off; the last hidden state.
import torch
import torch.nn as nn
import transformers


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = transformers.WhisperConfig(
            d_model=512, encoder_layers=6, encoder_attention_heads=8, encoder_ffn_dim=2048,
            # The decoder is built too (then unused): its heads must divide d_model.
            decoder_layers=1, decoder_attention_heads=8, decoder_ffn_dim=2048,
            num_mel_bins=80, max_source_positions=1500, dropout=0.0, attention_dropout=0.0,
            activation_dropout=0.0, use_cache=False, torchscript=True)
        self.net = transformers.WhisperModel(config).get_encoder()
        # Dropout and stochastic depth are random in training mode: off.
        for m in self.net.modules():
            if isinstance(m, nn.modules.dropout._DropoutNd):
                m.p = 0.0
            elif type(m).__name__ == 'StochasticDepth':  # torchvision
                m.p = 0.0
            elif hasattr(m, 'drop_prob'):  # timm's DropPath
                m.drop_prob = 0.0

    def forward(self, input_features):
        return self.net(input_features)[0]


def get_inputs():
    return [torch.randn(8, 80, 3000)]


def get_init_inputs():
    return []
