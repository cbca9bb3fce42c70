# transformers' traced attention mask (BERT: `_expand_mask` of an all-ones
# `attention_mask` made inside forward), which the trace keeps where eager
# transformers returns None; masks read from an input, a parameter (it can
# change between calls) or a random op stay.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.alibi = nn.Parameter(torch.zeros(8, 8))

    def forward(self, q, k, v, pad):
        b, s = q.size(0), q.size(2)
        mask = torch.ones(b, s, device=q.device)
        m = mask[:, None, None, :].expand(b, 1, s, s)
        inv = 1.0 - m
        ext = inv.masked_fill(inv.to(torch.bool), torch.finfo(torch.float32).min)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=ext)
        a2 = F.scaled_dot_product_attention(q, k, v, attn_mask=pad[:, None, None, :])
        a3 = F.scaled_dot_product_attention(q, k, v, attn_mask=self.alibi)
        a4 = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.rand(s, s, device=q.device))
        return a, a2, a3, a4


def get_inputs():
    return [torch.randn(2, 4, 8, 16), torch.randn(2, 4, 8, 16),
            torch.randn(2, 4, 8, 16), torch.zeros(2, 8)]


def get_init_inputs():
    return []
