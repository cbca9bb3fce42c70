#!/usr/bin/env python3
"""Where a model's GPU time goes under eager, torch.compile and
kb_rewrite.optimize(): CUDA kernel time per call by class (convolution,
GEMM, layout transposes, elementwise / fused epilogues, reductions, copies),
from torch.profiler over --iters calls after warm-up, in one process.
Issue 26's question: why torch.compile's default backend is ahead on a
ResNet-50 in eval mode (its layout, its epilogues, or its convolutions).

    python3 bench/probes/kernel_mix.py --model 1 --iters 10 --json out.json
"""

import argparse
import json
import os
import re
import sys

import torch
from torch.profiler import ProfilerActivity, profile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import kb_rewrite  # noqa: E402
from python_api import load_task  # noqa: E402

CLASSES = [
    ("transpose", r"nchwToNhwc|nhwcToNchw|transpose|convertTensor|permute|to_channels_last"),
    ("conv", r"conv|implicit_gemm|xmma_fprop|sm90_xmma|cudnn|fprop|dgrad|wgrad|winograd"),
    ("gemm", r"gemm|cutlass|sm90_|ampere_|cublas|matmul"),
    ("reduce", r"reduce|norm|softmax|pool|mean|sum"),
    ("copy", r"copy|Memcpy|Memset|fill"),
    ("pointwise", r"elementwise|vectorized|triton_|kb_|fused|add|mul|relu"),
]


def classify(name):
    for cls, pattern in CLASSES:
        if re.search(pattern, name, re.IGNORECASE):
            return cls
    return "other"


def mix(fn, inputs, iters, top=14):
    with torch.no_grad():
        for _ in range(3):
            fn(*inputs)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(iters):
                fn(*inputs)
            torch.cuda.synchronize()
    by_class, kernels = {}, []
    for e in prof.key_averages():
        us = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
        if us <= 0 or e.key.startswith("ProfilerStep"):
            continue
        cls = classify(e.key)
        per_call = us / iters / 1e3
        by_class[cls] = by_class.get(cls, 0.0) + per_call
        kernels.append((per_call, e.count // iters, cls, e.key[:110]))
    kernels.sort(reverse=True)
    return {"ms_by_class": {k: round(v, 4) for k, v in sorted(by_class.items())},
            "total_ms": round(sum(by_class.values()), 4),
            "top": [{"ms": round(ms, 4), "launches": n, "class": c, "name": k}
                    for ms, n, c, k in kernels[:top]]}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="1")
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--json")
    p.add_argument("--top", type=int, default=14, help="kernels listed per variant")
    p.add_argument("--train", action="store_true",
                   help="profile in training mode (KernelBench's and bench/kernelbench.py's)")
    args = p.parse_args()
    name, task = load_task(args.model)
    torch.manual_seed(0)
    model = task.Model(*task.get_init_inputs()).cuda()
    model.train(args.train)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
    out = {"model": name, "mode": "train" if args.train else "eval"}
    variants = {"eager": lambda: model, "compile": lambda: torch.compile(model),
                "optimize": lambda: kb_rewrite.optimize(model, inputs, quiet=True)}
    for key, build in variants.items():
        torch._dynamo.reset()
        try:
            fn = build()
            with torch.no_grad():
                for _ in range(3):  # compile, layout choice, graph capture
                    fn(*inputs)
            out[key] = mix(fn, inputs, args.iters, args.top)
        except Exception as exc:
            out[key] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        print(key, json.dumps(out[key]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
