# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# a GPT-2-small-sized decoder (transformers GPT2Model, 6 layers), batch 16 x
# 256 tokens. Random weights; dropout off; the last hidden state.
import torch
import torch.nn as nn
import transformers


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = transformers.GPT2Config(
            vocab_size=50257, n_positions=1024, n_embd=768, n_layer=6, n_head=12,
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, torchscript=True)
        self.net = transformers.GPT2Model(config)

    def forward(self, input_ids):
        return self.net(input_ids)[0]


def get_inputs():
    return [torch.randint(0, 50257, (16, 256))]


def get_init_inputs():
    return []
