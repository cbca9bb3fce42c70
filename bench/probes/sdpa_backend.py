"""Which kernel eager's scaled_dot_product_attention runs in each real model,
and why (t5_encoder's attention ran SDPA's math path in run96's profile:
bmm, the mask's add, softmax and _safe_softmax's isneginf/all/where per
layer, where compile fuses one kernel).

    sdpa_backend.py bench/models/33_t5_encoder.py [more model files]

Runs each model's forward once on the GPU (fp32, no grad) with
F.scaled_dot_product_attention wrapped: for every distinct call it prints
the shapes and strides of q, k, v and the mask, dropout, is_causal, scale,
the backend torch._fused_sdp_choice picks (0 math, 1 flash, 2 efficient,
3 cudnn in torch 2.x), and, where that is math, why the fused kernels
were refused (torch.backends.cuda.can_use_*_attention with debug=True
print their reasons as warnings).
"""
import importlib.util
import sys
import warnings

import torch
import torch.nn.functional as F

NAMES = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn", 4: "overrideable"}


def describe(t):
    if t is None:
        return "None"
    return f"{t.dtype} {tuple(t.shape)} strides {tuple(t.stride())}"


def choice(q, k, v, mask, dropout_p, is_causal, scale):
    try:
        return torch._fused_sdp_choice(q, k, v, mask, dropout_p, is_causal,
                                       scale=scale)
    except Exception as e:  # an older signature
        return f"? ({e})"


def reasons(q, k, v, mask, dropout_p, is_causal):
    params = torch.backends.cuda.SDPAParams(q, k, v, mask, dropout_p, is_causal,
                                            False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torch.backends.cuda.can_use_efficient_attention(params, True)
        torch.backends.cuda.can_use_flash_attention(params, True)
    return [str(x.message) for x in w]


def probe(path):
    spec = importlib.util.spec_from_file_location("m", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    torch.manual_seed(0)
    model = m.Model(*m.get_init_inputs()).cuda()
    with torch.device("cuda"):
        inputs = m.get_inputs()
    seen = {}
    original = F.scaled_dot_product_attention

    def wrapped(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
                scale=None, **kw):
        key = (describe(q), describe(k), describe(v), describe(attn_mask),
               dropout_p, is_causal, scale, tuple(sorted(kw)))
        if key not in seen:
            c = choice(q, k, v, attn_mask, dropout_p, is_causal, scale)
            why = reasons(q, k, v, attn_mask, dropout_p, is_causal) if c == 0 else []
            seen[key] = (c, why)
        seen[key] = seen[key][:2] + (seen[key][2] + 1 if len(seen[key]) > 2 else 1,)
        return original(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p,
                        is_causal=is_causal, scale=scale, **kw)

    F.scaled_dot_product_attention = wrapped
    torch.nn.functional.scaled_dot_product_attention = wrapped
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        F.scaled_dot_product_attention = original
    print(f"== {path}: {len(seen)} distinct SDPA calls")
    for key, (c, why, n) in seen.items():
        print(f"  x{n} backend {NAMES.get(c, c)}: q {key[0]}; k {key[1]}; "
              f"v {key[2]}; mask {key[3]}; dropout {key[4]} causal {key[5]} "
              f"scale {key[6]} {key[7]}")
        for line in why:
            print(f"    refused: {line}")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        probe(p)
