"""Probe (issue 22, item 4): which TF32 rounding does each cuDNN convolution
apply, NCHW against channels-last, for Conv3d and transposed convolutions?

Session 12 found, for forward Conv2d, that cuDNN's NCHW path rounds its
inputs to TF32 with ties away from zero (in its own transpose) and the sm90
channels-last kernel with ties to even, so channels-last with the inputs
pre-rounded ties-away agrees with NCHW to 1e-5. Conv3d tasks were refused
channels-last (results differ). This measures, per convolution kind and
shape, the difference from eager NCHW of:
  cl          channels-last as is
  cl_away     channels-last, x and w pre-rounded to TF32 ties away from zero
  cl_even     channels-last, pre-rounded ties to even
  cl_trunc    channels-last, pre-rounded by truncation
  cl_fp32     channels-last with TF32 off for this call
  nchw_away   NCHW with x and w pre-rounded ties-away (idempotent if NCHW
              rounds ties-away itself)
and the error of NCHW and channels-last against float64, the time of each
(CUDA events, median) and the kernels cuDNN ran.

  python3 bench/probes/conv_layout.py [--json F] [--runs 20]
      [--case KIND:N,C,H,W:COUT:K:S:P:OP[:GROUPS] ...]

--case replaces the built-in shapes (a depthwise convolution: GROUPS = C =
COUT).
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from codegen_vs_compile import time_ms  # noqa: E402  (bench/: the timing loop)

# (kind, input shape, out channels, kernel, stride, padding, output_padding)
CASES = [
    ("conv2d", (32, 64, 56, 56), 64, 3, 1, 1, 0),        # session 12's control
    ("conv3d", (8, 16, 16, 32, 32), 32, 3, 1, 1, 0),
    ("conv3d", (4, 3, 16, 64, 64), 16, 3, 1, 1, 0),
    ("conv3d", (16, 64, 8, 16, 16), 64, 1, 1, 0, 0),
    ("conv3d", (2, 32, 24, 24, 24), 64, 3, 2, 1, 0),
    ("conv3d", (16, 32, 16, 32, 32), 16, 3, 1, 0, 0),
    ("conv_transpose2d", (16, 64, 32, 32), 32, 3, 2, 1, 1),
    ("conv_transpose2d", (8, 32, 64, 64), 64, 5, 1, 2, 0),
    ("conv_transpose2d", (32, 128, 16, 16), 64, 1, 1, 0, 0),
    ("conv_transpose3d", (4, 32, 8, 16, 16), 16, 3, 2, 1, 1),
    ("conv_transpose3d", (2, 16, 16, 16, 16), 32, 1, 1, 0, 0),
    ("conv_transpose3d", (8, 64, 8, 8, 8), 32, 3, 1, 1, 0),
]


def rounded(t, mode):
    b = t.view(torch.int32)
    finite = (b & 0x7f800000) != 0x7f800000
    if mode == "away":
        r = (b + 0x1000) & -8192
    elif mode == "even":
        r = (b + 0xfff + ((b >> 13) & 1)) & -8192
    else:
        r = b & -8192
    return torch.where(finite, r, b).view(torch.float32)


def parse_case(text):
    parts = text.split(":")
    if len(parts) not in (7, 8):
        raise SystemExit(f"--case wants KIND:SHAPE:COUT:K:S:P:OP[:GROUPS], "
                         f"not {text!r}")
    shape = tuple(int(v) for v in parts[1].split(","))
    rest = [int(v) for v in parts[2:]]
    return (parts[0], shape, *rest)


def conv(kind, x, w, b, stride, pad, opad, groups=1):
    if kind == "conv2d":
        return F.conv2d(x, w, b, stride, pad, 1, groups)
    if kind == "conv3d":
        return F.conv3d(x, w, b, stride, pad, 1, groups)
    if kind == "conv_transpose2d":
        return F.conv_transpose2d(x, w, b, stride, pad, opad, groups)
    return F.conv_transpose3d(x, w, b, stride, pad, opad, groups)


def elapsed(fn, runs):
    """Median CUDA-event ms of `runs` calls, without an L2 flush (as session
    17's figures were taken)."""
    return time_ms(fn, runs, flush=lambda: None)


def kernels(fn):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name[:90] for e in p.events()
                   if e.device_type == torch.autograd.DeviceType.CUDA})


def probe(case, runs):
    kind, shape, cout, k, stride, pad, opad = case[:7]
    groups = case[7] if len(case) > 7 else 1
    torch.manual_seed(0)
    dims = len(shape) - 2
    cin = shape[1]
    x = torch.randn(shape, device="cuda")
    wshape = ((cin, cout // groups) if kind.startswith("conv_t")
              else (cout, cin // groups)) + (k,) * dims
    w = torch.randn(wshape, device="cuda") / (cin // groups * k ** dims) ** 0.5
    b = torch.randn(cout, device="cuda")
    fmt = torch.channels_last if dims == 2 else torch.channels_last_3d
    run = lambda xx, ww: conv(kind, xx, ww, b, stride, pad, opad, groups)
    torch.backends.cudnn.allow_tf32 = True
    ref = run(x, w)
    truth = conv(kind, x.double(), w.double(), b.double(), stride, pad,
                 opad, groups)
    xcl, wcl = x.contiguous(memory_format=fmt), w.contiguous(memory_format=fmt)
    out = {"case": f"{kind} {list(shape)} -> {cout} k{k} s{stride} p{pad}"
           f" op{opad}" + (f" g{groups}" if groups > 1 else "")}
    variants = {
        "cl": lambda: run(xcl, wcl),
        "cl_away": lambda: run(rounded(x, "away").contiguous(memory_format=fmt),
                               rounded(w, "away").contiguous(memory_format=fmt)),
        "cl_even": lambda: run(rounded(x, "even").contiguous(memory_format=fmt),
                               rounded(w, "even").contiguous(memory_format=fmt)),
        "cl_trunc": lambda: run(rounded(x, "trunc").contiguous(memory_format=fmt),
                                rounded(w, "trunc").contiguous(memory_format=fmt)),
        "nchw_away": lambda: run(rounded(x, "away"), rounded(w, "away")),
    }
    scale = ref.abs().max().item()
    out["ref_vs_fp64"] = (ref.double() - truth).abs().max().item() / scale
    for name, fn in variants.items():
        y = fn().float()
        out[name] = (y - ref).abs().max().item() / scale
        out[name + "_bits"] = int((y.contiguous() != ref).sum().item())
    torch.backends.cudnn.allow_tf32 = False
    y = run(xcl, wcl)
    out["cl_fp32"] = (y - ref).abs().max().item() / scale
    out["nchw_fp32_vs_fp64"] = (run(x, w).double() - truth).abs().max().item() / scale
    out["ms_nchw_fp32"] = elapsed(lambda: run(x, w), runs)
    out["ms_cl_fp32"] = elapsed(lambda: run(xcl, wcl), runs)
    torch.backends.cudnn.allow_tf32 = True
    out["cl_vs_fp64"] = (run(xcl, wcl).double() - truth).abs().max().item() / scale
    out["ms_nchw"] = elapsed(lambda: run(x, w), runs)
    out["ms_cl"] = elapsed(lambda: run(xcl, wcl), runs)
    out["kernels_nchw"] = kernels(lambda: run(x, w))
    out["kernels_cl"] = kernels(lambda: run(xcl, wcl))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--case", action="append", default=[])
    args = ap.parse_args()
    cases = [parse_case(c) for c in args.case] or CASES
    rows = []
    print("| case | NCHW err/fp64 | CL err/fp64 | cl | cl_away | cl_even | "
          "cl_trunc | cl_fp32 | nchw_away | ms NCHW / CL / CL fp32 |")
    print("|---" * 10 + "|")
    for case in cases:
        r = probe(case, args.runs)
        rows.append(r)
        print(f"| {r['case']} | {r['ref_vs_fp64']:.1e} | {r['cl_vs_fp64']:.1e} | "
              + " | ".join(f"{r[n]:.1e}" for n in (
                  "cl", "cl_away", "cl_even", "cl_trunc", "cl_fp32",
                  "nchw_away"))
              + f" | {r['ms_nchw']:.3f} / {r['ms_cl']:.3f} / "
              f"{r['ms_cl_fp32']:.3f} |", flush=True)
        print("   nchw:", "; ".join(r["kernels_nchw"]))
        print("   cl:  ", "; ".join(r["kernels_cl"]), flush=True)
    meta = {"torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(),
            "device": torch.cuda.get_device_name()}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "cases": rows}, f, indent=1)


if __name__ == "__main__":
    main()
