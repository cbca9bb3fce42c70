"""Which float expression reproduces eager's eval-mode batch_norm bit for bit.

Eval batch norm (running statistics) on CUDA runs cuDNN's inference kernel
(ATen's _select_batch_norm_backend picks cuDNN for inputs of 3+ dims), whose
source is closed, so the order of its roundings can only be found by
experiment: this probe computes candidate expressions with torch ops on the
GPU (a fused multiply-add emulated in float64: the product of two floats is
exact there) and counts the output bits that differ from eager's, for cuDNN
and for ATen's own kernel (cudnn off), over several shapes and layouts.

    python3 bench/probes/bn_order.py --json OUT.json
"""
import argparse
import json

import torch


def fma(a, b, c):
    return (a.double() * b.double() + c.double()).float()


def candidates(x, m, v, w, b, eps):
    e = torch.tensor(eps, dtype=torch.float32, device=x.device)
    invs = {
        "div_sqrt": 1.0 / torch.sqrt(v + e),
        "rsqrt": torch.rsqrt(v + e),
        "rn_double": (1.0 / torch.sqrt(v.double() + eps)).float(),
        "rsqrt_double_eps": torch.rsqrt((v.double() + eps).float()),
    }
    out = {}
    for name, inv in invs.items():
        s = inv * w
        xm = x - m
        forms = {
            "((x-m)*inv)*w+b": (xm * inv) * w + b,
            "fma((x-m)*inv,w,b)": fma(xm * inv, w, b),
            "fma(x-m,inv*w,b)": fma(xm, s, b),
            "(x-m)*(inv*w)+b": xm * s + b,
            "fma(x,s,b-m*s)": fma(x, s, b - m * s),
            "fma(x,s,fma(-m,s,b))": fma(x, s, fma(-m, s, b)),
            "x*s+(b-m*s)": x * s + (b - m * s),
            "fma(w,(x-m)*inv,b)": fma(w, xm * inv, b),
            "w*((x-m)*inv)+b": w * (xm * inv) + b,
            "fma(inv,(x-m)*w,b)": fma(inv, xm * w, b),
            "((x-m)*w)*inv+b": (xm * w) * inv + b,
            "fma(x*s,1,b-m*s)": x * s + (b - m * s),
        }
        for f, y in forms.items():
            out[f"{name}: {f}"] = y
    out["double: ((x-m)*inv*w+b)"] = (((x.double() - m.double()) / torch.sqrt(v.double() + eps))
                                      * w.double() + b.double()).float()
    return out


def bits(a, b):
    # Elementwise, whatever the two layouts.
    return int((a.contiguous().view(torch.int32) != b.contiguous().view(torch.int32)).sum().item())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json")
    args = ap.parse_args()
    torch.manual_seed(0)
    shapes = [(32, 64, 56, 56), (8, 256, 14, 14), (16, 3, 17, 19), (4, 32, 8, 8, 8), (64, 128, 100)]
    results = {}
    for shape in shapes:
        c = shape[1]
        view = [1, c] + [1] * (len(shape) - 2)
        for layout in ("contiguous", "channels_last"):
            if layout == "channels_last" and len(shape) != 4:
                continue
            x = torch.randn(shape, device="cuda") * 3 + 0.5
            if layout == "channels_last":
                x = x.contiguous(memory_format=torch.channels_last)
            m = torch.randn(c, device="cuda")
            v = torch.rand(c, device="cuda") * 2 + 0.01
            w = torch.randn(c, device="cuda")
            b = torch.randn(c, device="cuda")
            eps = 1e-5
            for backend in ("cudnn", "native"):
                torch.backends.cudnn.enabled = backend == "cudnn"
                y = torch.nn.functional.batch_norm(x, m, v, w, b, False, 0.1, eps)
                torch.backends.cudnn.enabled = True
                cands = candidates(x, m.view(view), v.view(view), w.view(view), b.view(view), eps)
                counts = {k: bits(y, t) for k, t in cands.items()}
                key = f"{backend} {shape} {layout}"
                results[key] = counts
                best = sorted(counts.items(), key=lambda kv: kv[1])[:4]
                print(key, y.numel(), "best:", "; ".join(f"{k} {n}" for k, n in best), flush=True)
    # Which forms are exact everywhere, per backend.
    for backend in ("cudnn", "native"):
        keys = [k for k in results if k.startswith(backend)]
        forms = results[keys[0]].keys()
        exact = [f for f in forms if all(results[k][f] == 0 for k in keys)]
        print(backend, "exact everywhere:", exact or "none")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                       "gpu": torch.cuda.get_device_name(), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
