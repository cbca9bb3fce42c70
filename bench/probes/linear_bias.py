"""Probe: is `linear(x, W, b)` (cuBLASLt's bias epilogue in eager) slower
than the bias-free GEMM `linear(x, W)` whose bias add a fused epilogue would
take over, and are the two bit-identical once the bias is added in fp32?

  python3 bench/probes/linear_bias.py [--json F]

For each (M, K, N): medians of CUDA-event timings (L2 not flushed: GEMM
operands are mostly L2-resident in real models too), the ratio, and the
number of elements where linear(x, W, b) != linear(x, W) + b.
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from codegen_vs_compile import time_ms  # noqa: E402


def median_ms(fn, runs=30):
    """Median of CUDA-event timings; the L2 is not flushed (see above)."""
    return time_ms(fn, runs, lambda: None)


SHAPES = [
    # (M, K, N): ViT-S/16 batch 32 (M = 32 * 197), ViT-B, BERT/GPT-2 (M = 16 * 256),
    # generated-task Linear anchors (odd sizes), small batches.
    (6304, 384, 1152), (6304, 384, 384), (6304, 384, 1536), (6304, 1536, 384),
    (6304, 768, 2304), (6304, 768, 768), (6304, 768, 3072), (6304, 3072, 768),
    (4096, 768, 2304), (4096, 768, 768), (4096, 768, 3072), (4096, 3072, 768),
    (32, 384, 1000), (128, 4096, 4096), (1024, 8192, 8192), (16384, 1024, 4096),
    (8192, 2048, 509), (32768, 511, 1023), (2048, 257, 8191), (65536, 64, 64),
    (512, 16384, 16384 // 4), (100000, 96, 33),
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json")
    a = p.parse_args()
    torch.manual_seed(0)
    rows = []
    print("M K N | with bias ms | bias-free ms | ratio | elements differing")
    for m, k, n in SHAPES:
        x = torch.randn(m, k, device="cuda")
        w = torch.randn(n, k, device="cuda") / k ** 0.5
        b = torch.randn(n, device="cuda")
        with torch.no_grad():
            ref = F.linear(x, w, b)
            split = F.linear(x, w) + b
            diff = int((ref != split).sum())
            t_bias = median_ms(lambda: F.linear(x, w, b))
            t_free = median_ms(lambda: F.linear(x, w))
        rows.append({"m": m, "k": k, "n": n, "bias_ms": t_bias, "free_ms": t_free,
                     "differing": diff, "elements": m * n})
        print(f"{m} {k} {n} | {t_bias:.4f} | {t_free:.4f} | {t_bias / t_free:.2f}x | {diff}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
