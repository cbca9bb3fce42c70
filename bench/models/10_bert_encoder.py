# Real-model task (KernelBench format) for bench/kernelbench.py --dir bench/models:
# a BERT-base-sized encoder (transformers BertModel, 6 layers), batch 32 x
# 128 tokens. Random weights; dropout off; the last hidden state.
import torch
import torch.nn as nn
import transformers


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = transformers.BertConfig(
            vocab_size=30522, hidden_size=768, num_hidden_layers=6, num_attention_heads=12,
            intermediate_size=3072, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
            torchscript=True)
        self.net = transformers.BertModel(config, add_pooling_layer=False)

    def forward(self, input_ids):
        return self.net(input_ids)[0]


def get_inputs():
    return [torch.randint(0, 30522, (32, 128))]


def get_init_inputs():
    return []
