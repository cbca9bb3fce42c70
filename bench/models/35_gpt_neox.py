# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# a GPT-NeoX-style decoder (transformers GPTNeoXModel: parallel attention
# and MLP, partial rotary embeddings, GELU), 4 layers of hidden 1024, batch 8 x
# 256 tokens. Random weights; dropout off; no KV cache; the last hidden state.
import torch
import torch.nn as nn
import transformers


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = transformers.GPTNeoXConfig(
            vocab_size=50432, hidden_size=1024, num_hidden_layers=4, num_attention_heads=16,
            intermediate_size=4096, max_position_embeddings=512, attention_dropout=0.0, hidden_dropout=0.0,
            use_cache=False, torchscript=True, attn_implementation='eager')
        self.net = transformers.GPTNeoXModel(config)
        # Dropout and stochastic depth are random in training mode: off.
        for m in self.net.modules():
            if isinstance(m, nn.modules.dropout._DropoutNd):
                m.p = 0.0
            elif type(m).__name__ == 'StochasticDepth':  # torchvision
                m.p = 0.0
            elif hasattr(m, 'drop_prob'):  # timm's DropPath
                m.drop_prob = 0.0

    def forward(self, input_ids):
        return self.net(input_ids, use_cache=False)[0]


def get_inputs():
    return [torch.randint(0, 50432, (8, 256))]


def get_init_inputs():
    return []
