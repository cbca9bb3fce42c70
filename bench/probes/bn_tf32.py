"""Probe (issue 22, item 3): can a batch norm that feeds a TF32 convolution
be fused and still pass KernelBench's 1e-4 check?

Training-mode batch norm on CUDA is cuDNN's in eager (closed reduction
order). This replaces every batch norm of a model by a variant and compares
the model's output with eager's:
  cudnn   torch's default (a control: must give 0)
  native  ATen's own CUDA kernel (torch.ops.aten.native_batch_norm)
  ours    statistics in float64, (float)((x - mean) * rstd) * w + b, as
          kb-rewrite's norm kernels compute it
  ideal   everything in float64, rounded once
and, for one conv -> bn -> relu -> conv block, how many of the batch
norm's outputs are bit-identical to cuDNN's for each variant and for
formulas over cuDNN's own saved statistics.

  python3 bench/probes/bn_tf32.py [--models resnet18,resnet50] [--json F]
"""
import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F

EPS = 1e-5


def bn_variant(kind):
    def run(x, rm, rv, w=None, b=None, training=False, momentum=0.1,
            eps=EPS):
        if kind == "cudnn" or not training or x.dim() != 4:
            return ORIG(x, rm, rv, w, b, training, momentum, eps)
        if kind == "native":
            return torch.ops.aten.native_batch_norm(
                x, w, b, rm, rv, training, momentum, eps)[0]
        x64 = x.double()
        mean = x64.mean((0, 2, 3), keepdim=True)
        var = x64.var((0, 2, 3), unbiased=False, keepdim=True)
        rstd = 1.0 / torch.sqrt(var + eps)
        shape = (1, -1, 1, 1)
        if kind == "ours":
            y = ((x64 - mean) * rstd).float()
            return y * w.view(shape) + b.view(shape)
        return ((x64 - mean) * rstd * w.double().view(shape) +
                b.double().view(shape)).float()
    return run


ORIG = F.batch_norm


def close(a, b):
    return bool(torch.allclose(a, b, rtol=1e-4, atol=1e-4))


def model_probe(name):
    import torchvision
    torch.manual_seed(0)
    net = getattr(torchvision.models, name)(weights=None).cuda()
    x = torch.randn(32, 3, 224, 224, device="cuda")
    out = {}
    with torch.no_grad():
        ref = net(x)
        for kind in ["cudnn", "native", "ours", "ideal"]:
            F.batch_norm = bn_variant(kind)
            try:
                y = net(x)
            finally:
                F.batch_norm = ORIG
            err = (y - ref).abs().max().item()
            out[kind] = {"max_abs_err": err, "correct_1e4": close(y, ref)}
            print(f"{name:10s} {kind:7s} max abs err {err:.3e} "
                  f"1e-4: {close(y, ref)}", flush=True)
    return out


def block_probe():
    torch.manual_seed(0)
    c1 = nn.Conv2d(64, 64, 3, padding=1, bias=False).cuda()
    c2 = nn.Conv2d(64, 64, 3, padding=1, bias=False).cuda()
    bn = nn.BatchNorm2d(64).cuda()
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
    x = torch.randn(32, 64, 56, 56, device="cuda")
    res = {}
    with torch.no_grad():
        h = c1(x)
        y, mean, invstd, _ = torch.ops.aten.cudnn_batch_norm(
            h, bn.weight, bn.bias, bn.running_mean.clone(),
            bn.running_var.clone(), True, 0.1, EPS)
        ref = c2(torch.relu(y))
        again = c2(torch.relu(F.batch_norm(h, bn.running_mean.clone(),
                                           bn.running_var.clone(), bn.weight,
                                           bn.bias, True, 0.1, EPS)))
        res["eager_repeat_max_abs_err"] = (again - ref).abs().max().item()
        w = bn.weight.view(1, -1, 1, 1)
        b = bn.bias.view(1, -1, 1, 1)
        m = mean.view(1, -1, 1, 1)
        s = invstd.view(1, -1, 1, 1)
        scale = w * s
        shift = b - m * scale
        forms = {
            "(x - mean) * invstd * w + b": (h - m) * s * w + b,
            "x * scale + shift": h * scale + shift,
            "fma(x, scale, shift)": torch.addcmul(shift, h, scale),
            "(x - mean) * (invstd * w) + b": (h - m) * scale + b,
        }
        for kind in ["native", "ours", "ideal"]:
            forms["statistics: " + kind] = bn_variant(kind)(
                h, bn.running_mean.clone(), bn.running_var.clone(), bn.weight,
                bn.bias, True)
        for label, v in forms.items():
            same = (v == y).float().mean().item()
            err = (c2(torch.relu(v)) - ref).abs().max().item()
            res[label] = {"bit_identical": same, "conv_max_abs_err": err,
                          "correct_1e4": err <= 1e-4 * (1 + ref.abs().max().item())}
            print(f"block {label:34s} bit-identical {same * 100:6.2f}%  "
                  f"next conv max abs err {err:.3e}", flush=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet18,resnet50")
    ap.add_argument("--json")
    a = ap.parse_args()
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
          f"TF32 convs {torch.backends.cudnn.allow_tf32}, "
          f"{torch.cuda.get_device_name()}")
    out = {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           "block": block_probe(), "models": {}}
    for m in a.models.split(","):
        if m:
            out["models"][m] = model_probe(m)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
