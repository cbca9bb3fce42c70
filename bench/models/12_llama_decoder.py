# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# a LLaMA-style decoder (transformers LlamaModel, 4 layers of hidden 1024,
# RMSNorm, SwiGLU, rotary embeddings), batch 8 x 256 tokens. Random weights;
# eager attention, no KV cache; the last hidden state.
import torch
import torch.nn as nn
import transformers


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = transformers.LlamaConfig(
            vocab_size=32000, hidden_size=1024, intermediate_size=2816,
            num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=16,
            max_position_embeddings=512, use_cache=False, torchscript=True,
            attn_implementation="eager")
        self.net = transformers.LlamaModel(config)

    def forward(self, input_ids):
        return self.net(input_ids, use_cache=False)[0]


def get_inputs():
    return [torch.randint(0, 32000, (8, 256))]


def get_init_inputs():
    return []
