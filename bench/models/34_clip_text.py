# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# a CLIP text encoder (transformers CLIPTextModel: quick_gelu, causal
# mask, final LayerNorm), batch 64 x 77 tokens. Random weights; dropout off; the
# last hidden state.
import torch
import torch.nn as nn
import transformers


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = transformers.CLIPTextConfig(
            vocab_size=49408, hidden_size=512, intermediate_size=2048, num_hidden_layers=12,
            num_attention_heads=8, max_position_embeddings=77, hidden_act='quick_gelu',
            attention_dropout=0.0, torchscript=True)
        self.net = transformers.CLIPTextModel(config)
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
    return [torch.randint(0, 49408, (64, 77))]


def get_init_inputs():
    return []
