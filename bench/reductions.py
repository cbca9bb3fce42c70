#!/usr/bin/env python3
"""Reductions, norms, softmax and pooling over shape classes, at bandwidth.

    python3 bench/reductions.py --emit DIR          # the cases as tasks (CPU)
    python3 bench/reductions.py --run DIR --json J --kb-rewrite B --kb-verify V
                                [--kernels-only] [kernelbench.py args]
    python3 bench/reductions.py --table J

Each case is one op over one shape class (the reduced dim leading, middle
or trailing; short or long rows; many or few rows), every input >= 256 MB,
written as a KernelBench task. `--run` times them with bench/kernelbench.py
(eager, torch.compile and kb-rewrite's ModelNew in the same process, medians
of CUDA events, the never-slower rule applied) and measures a device copy in
the same run; the table gives each as bandwidth over the bytes the op must
move at least:

  reductions, pooling       one read of the input + one write of the output
  softmax, log_softmax      one read + one write (a row fits on chip)
  norms                     two reads + one write: the input exceeds on-chip
                            memory (H200: 50 MB L2, 132 x 228 KB shared), so
                            statistics and normalisation each read it once

and the percentage of the copy's bandwidth (read + write bytes per second
of a 1 GiB device-to-device copy).

Two measurements per case, both in the same run:
  kernel     `kb-rewrite codegen` on the exported case, then kb-verify on
             its job (five trials, then the kernel and the region's ATen
             ops timed with the L2 flushed before each launch): what the
             code generator does, whether or not the rule keeps it;
  end to end bench/kernelbench.py: eager, torch.compile and the ModelNew
             (with the never-slower rule: a dropped region runs ATen).
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# name, class, forward body, input shape, module init, kind
# kind: "reduce" (1 read + output write), "norm" (2 reads + 1 write),
#       "row" (softmax: 1 read + 1 write)
CASES = [
    # batch norm in training mode: statistics over N*H*W per channel
    ("batch_norm2d_few_channels", "few long rows (C=48 of 2.2M)",
     "return self.bn(x)", [64, 48, 192, 180], "self.bn = nn.BatchNorm2d(48)", "norm"),
    ("batch_norm2d_many_channels", "many rows (C=1024 of 14x14x32)",
     "return self.bn(x)", [32, 1024, 56, 56], "self.bn = nn.BatchNorm2d(1024)", "norm"),
    ("batch_norm1d", "strided rows (N=1M x C=96)",
     "return self.bn(x)", [1048576, 96], "self.bn = nn.BatchNorm1d(96)", "norm"),
    ("batch_norm3d", "few long rows (C=16, 3D)",
     "return self.bn(x)", [8, 16, 64, 128, 130], "self.bn = nn.BatchNorm3d(16)", "norm"),
    # group / instance / layer norm
    ("group_norm_few_groups", "few long rows (N*G=16)",
     "return self.gn(x)", [8, 64, 384, 384], "self.gn = nn.GroupNorm(2, 64)", "norm"),
    ("group_norm", "many rows (N*G=1024)",
     "return self.gn(x)", [32, 256, 96, 96], "self.gn = nn.GroupNorm(32, 256)", "norm"),
    ("instance_norm", "many rows of 16K",
     "return self.inorm(x)", [64, 64, 128, 128],
     "self.inorm = nn.InstanceNorm2d(64)", "norm"),
    ("instance_norm_few", "few long rows (N*C=24)",
     "return self.inorm(x)", [8, 3, 2048, 2048],
     "self.inorm = nn.InstanceNorm2d(3)", "norm"),
    ("layer_norm_short", "many short rows (8)",
     "return self.ln(x)", [8388608, 8], "self.ln = nn.LayerNorm(8)", "norm"),
    ("layer_norm_768", "many rows of 768",
     "return self.ln(x)", [131072, 768], "self.ln = nn.LayerNorm(768)", "norm"),
    ("layer_norm_long", "few long rows (16 of 4M)",
     "return self.ln(x)", [16, 4194304], "self.ln = nn.LayerNorm(4194304, elementwise_affine=False)",
     "norm"),
    # softmax family
    ("softmax_last", "many rows of 1024, trailing dim",
     "return torch.softmax(x, dim=-1)", [65536, 1024], "", "row"),
    ("softmax_dim0", "leading dim (1024 of 64x1024)",
     "return torch.softmax(x, dim=0)", [1024, 64, 1024], "", "row"),
    ("log_softmax_middle", "middle dim (256 of 64 x 4096)",
     "return torch.log_softmax(x, dim=1)", [64, 256, 4096], "", "row"),
    ("log_softmax_long", "few long rows (32 of 2M)",
     "return torch.log_softmax(x, dim=1)", [32, 2097152], "", "row"),
    ("logsumexp_last", "many rows of 4096",
     "return torch.logsumexp(x, dim=-1)", [16384, 4096], "", "reduce"),
    ("logsumexp_dim0", "leading dim",
     "return torch.logsumexp(x, dim=0)", [4096, 16384], "", "reduce"),
    # plain reductions
    ("sum_last_short", "many short rows (32)",
     "return x.sum(dim=-1)", [2097152, 32], "", "reduce"),
    ("sum_last_long", "few long rows (8 of 8M)",
     "return x.sum(dim=-1)", [8, 8388608], "", "reduce"),
    ("sum_dim0", "leading dim (8192 of 8192)",
     "return x.sum(dim=0)", [8192, 8192], "", "reduce"),
    ("mean_middle", "middle dim (512 of 128x1024)",
     "return x.mean(dim=1)", [128, 512, 1024], "", "reduce"),
    ("mean_spatial", "trailing dims (H*W per channel)",
     "return x.mean(dim=(2, 3))", [64, 256, 64, 64], "", "reduce"),
    ("amax_dim0_narrow", "leading dim, few columns (1M of 64)",
     "return x.amax(dim=0)", [1048576, 64], "", "reduce"),
    ("amax_middle", "middle dim, keepdim",
     "return x.amax(dim=1, keepdim=True)", [32, 1024, 2048], "", "reduce"),
    ("var_last", "many rows of 2048",
     "return x.var(dim=-1)", [32768, 2048], "", "reduce"),
    ("var_dim0", "leading dim",
     "return x.var(dim=0)", [16384, 4096], "", "reduce"),
    ("vector_norm_last", "L2 norm over rows of 4096",
     "return torch.linalg.vector_norm(x, dim=-1)", [16384, 4096], "", "reduce"),
    # pooling
    ("max_pool2d", "3x3 stride 2 windows",
     "return self.pool(x)", [32, 128, 128, 128],
     "self.pool = nn.MaxPool2d(3, stride=2, padding=1)", "reduce"),
    ("avg_pool2d", "2x2 windows",
     "return self.pool(x)", [32, 128, 128, 128], "self.pool = nn.AvgPool2d(2)", "reduce"),
    ("adaptive_avg_pool2d", "global (per channel)",
     "return self.pool(x)", [64, 512, 48, 48],
     "self.pool = nn.AdaptiveAvgPool2d(1)", "reduce"),
    # Short contiguous rows of scalars (session 36; appended, so earlier
    # runs' case numbers stay): softmax staged as a block's tile, layer
    # norms over rows not a multiple of 4 by lane groups.
    ("softmax_short", "many short rows (14)",
     "return torch.softmax(x, dim=-1)", [1024, 48, 128, 14], "", "row"),
    ("log_softmax_short", "many short rows (7)",
     "return torch.log_softmax(x, dim=-1)", [4096, 3072, 7], "", "row"),
    ("layer_norm_short_odd", "many short rows (10, not float4)",
     "return self.ln(x)", [8388608, 10], "self.ln = nn.LayerNorm(10)", "norm"),
]

TEMPLATE = '''"""bench/reductions.py case {name}: {cls}."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        {init}

    def forward(self, x):
        {body}


def get_inputs():
    return [torch.randn({shape})]


def get_init_inputs():
    return []
'''


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def out_numel(name, shape):
    """Elements the case writes (its result), from the op's shape rule."""
    import re
    case = next(c for c in CASES if c[0] == name)
    body = case[2]
    if case[5] in ("norm", "row"):
        return numel(shape)
    if "pool2d" in name:
        if "adaptive" in name:
            return shape[0] * shape[1]
        k, s, p = (3, 2, 1) if name == "max_pool2d" else (2, 2, 0)
        h = (shape[2] + 2 * p - k) // s + 1
        w = (shape[3] + 2 * p - k) // s + 1
        return shape[0] * shape[1] * h * w
    m = re.search(r"dim=\(?(-?\d+)(?:, (-?\d+))?\)?", body)
    dims = [int(g) % len(shape) for g in m.groups() if g is not None]
    return numel(shape) // numel([shape[d] for d in dims])


def min_bytes(name):
    case = next(c for c in CASES if c[0] == name)
    shape, kind = case[3], case[5]
    reads = 2 if kind == "norm" else 1
    return 4 * (reads * numel(shape) + out_numel(name, shape))


def emit(folder):
    os.makedirs(folder, exist_ok=True)
    for i, (name, cls, body, shape, init, _) in enumerate(CASES):
        text = TEMPLATE.format(name=name, cls=cls, body=body,
                               shape=", ".join(map(str, shape)),
                               init=init or "pass")
        path = os.path.join(folder, f"{i}_{name}.py")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
        if numel(shape) * 4 < 256 << 20:
            raise SystemExit(f"reductions.py: case {name} is under 256 MB")
    print(f"wrote {len(CASES)} cases to {folder}")


def case_shape(name):
    return next(c for c in CASES if c[0] == name)[3]


def copy_gbs():
    """Read + write bytes per second of a 1 GiB device copy (median of 9)."""
    import torch
    a = torch.empty(1 << 28, device="cuda")
    b = torch.empty_like(a)
    ms = []
    for i in range(12):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        b.copy_(a)
        e.record()
        e.synchronize()
        if i >= 3:
            ms.append(s.elapsed_time(e))
    ms.sort()
    return 2 * a.numel() * 4 / (ms[len(ms) // 2] * 1e-3) / 1e9


def kernel_phase(folder, kb_rewrite, kb_verify, device="cuda", only=None,
                 done=None):
    """Per case (or the cases named in `only`): the generated kernel's
    kb-verify verdict (status, kernel and ATen medians, copy bandwidth) as
    {name: {...}}. `device` is kb-export's (meta for CPU tests). `done(out)`
    runs after each case (the caller saves the partial results: a command
    cut short by its time limit keeps what it measured)."""
    out = {}
    exp = os.path.join(folder, "exported")
    for i, (name, *_rest) in enumerate(CASES):
        if only and name not in only:
            continue
        try:
            stem = f"{i}_{name}"
            graph = os.path.join(exp, stem, stem + ".graph.txt")
            rec = out.setdefault(name, {"status": "not_exported"})
            r = subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "kb-export",
                                                              "kb_export.py"),
                                os.path.join(folder, stem + ".py"), "-o",
                                os.path.join(exp, stem), "--name", stem, "--device", device],
                               capture_output=True, text=True)
            if r.returncode != 0 or not os.path.exists(graph):
                rec["detail"] = (r.stderr or r.stdout)[-300:]
                continue
            cg = os.path.join(folder, "codegen", stem)
            r = subprocess.run([kb_rewrite, "codegen", graph, "-o", cg],
                               capture_output=True, text=True)
            job = os.path.join(cg, "kb_region_0.job.json")
            if not os.path.exists(job):
                rec.update(status="not_generated", detail=(r.stdout + r.stderr)[-300:])
                continue
            r = subprocess.run([kb_verify, "--job", job, "--no-cache"],
                               capture_output=True, text=True, timeout=300)
            try:
                v = json.loads(r.stdout)
            except ValueError:
                rec.update(status="verify_failed", detail=r.stderr[-300:])
                continue
            c, e = v.get("candidate_timing") or {}, v.get("eager_timing") or {}
            rec.update(status=v.get("status"), kernel_ms=c.get("median_ms"),
                       aten_ms=e.get("median_ms"), copy_gbs=v.get("copy_bandwidth_gbs"),
                       detail=(v.get("detail") or "")[:200])
            print(f"{name}: {rec['status']} kernel {rec['kernel_ms']} ms, ATen "
                  f"{rec['aten_ms']} ms", flush=True)
        finally:
            if done:
                done(out)
    return out


def table(results, copy):
    by_name = {}
    for t in results.get("tasks", []):
        stem = t["task"][:-3] if t["task"].endswith(".py") else t["task"]
        by_name[stem.split("_", 1)[1]] = t
    kernels = results.get("kernels", {})
    print(f"copy bandwidth: {copy:.0f} GB/s (read + write)\n")
    print("| case | class | MB moved | eager ms | compile ms | kernel ms | kernel % of copy "
          "| kernel vs compile | end to end ms | end to end |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    low = []
    for name, cls, _, shape, _, kind in CASES:
        t = by_name.get(name, {})
        k = kernels.get(name, {})
        mb = min_bytes(name) / 1e6
        eager, comp = t.get("eager_ms"), t.get("compile_ms")
        kms = k.get("kernel_ms") if k.get("status") == "accepted" else None
        fmt = lambda v: "" if v is None else f"{v:.3f}"
        pct = vs = ""
        if kms:
            p = 100 * min_bytes(name) / (kms * 1e-3) / 1e9 / copy
            pct = f"{p:.0f}%"
            if comp:
                vs = f"{comp / kms:.2f}x"
            if p < 80 or (comp and comp / kms < 1.0):
                low.append(name)
        else:
            low.append(name)
        kern = fmt(kms) or (k.get("status") or "not run")
        ours = t.get("new_ms")
        if t.get("forward_choice") == "original":
            ours = eager
        e2e = ", ".join(sorted({r["status"] for r in t.get("regions", [])})) or \
            (t.get("error", "not run") if t else "not run")
        if t.get("forward_choice") == "original":
            e2e += " (forward fell back)"
        print(f"| {name} | {cls} | {mb:.0f} | {fmt(eager)} | {fmt(comp)} | {kern} | {pct} "
              f"| {vs} | {fmt(ours)} | {e2e[:50]} |")
    print(f"\nbelow 80% of copy, below torch.compile or without a kernel: {len(low)} of "
          f"{len(CASES)}: {', '.join(low)}")
    print("norms count two reads and one write: every case's input exceeds on-chip memory "
          "(a row that stays in L2 between the passes can exceed 100%)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--emit", metavar="DIR")
    ap.add_argument("--run", metavar="DIR", help="emit the cases into DIR and time them")
    ap.add_argument("--json", help="kernelbench.py's result file")
    ap.add_argument("--table", metavar="JSON")
    ap.add_argument("--copy-gbs", type=float)
    ap.add_argument("--kb-rewrite")
    ap.add_argument("--kb-verify")
    ap.add_argument("--kernels-only", action="store_true",
                    help="time the generated kernels only (no kernelbench.py run)")
    args, rest = ap.parse_known_args()
    if args.emit:
        emit(args.emit)
        return 0
    if args.run:
        emit(args.run)
        if not args.json or not args.kb_rewrite or not args.kb_verify:
            raise SystemExit("reductions.py: --run needs --json, --kb-rewrite and --kb-verify")
        res = {}
        if os.path.exists(args.json):
            with open(args.json) as f:
                res = json.load(f)
        copy = copy_gbs()

        def save(kernels):
            res["copy_gbs"] = copy
            res["kernels"] = kernels
            tmp = args.json + ".tmp"
            with open(tmp, "w") as f:
                json.dump(res, f, indent=1)
            os.replace(tmp, args.json)

        kernels = kernel_phase(args.run, args.kb_rewrite, args.kb_verify, done=save)
        rc = 0
        if not args.kernels_only:
            # kernelbench.py keeps its own JSON (resumable); the kernels and
            # the copy are merged into it afterwards.
            cmd = [sys.executable, os.path.join(HERE, "kernelbench.py"), "--dir", args.run,
                   "--json", args.json, "--kb-rewrite", args.kb_rewrite,
                   "--kb-verify", args.kb_verify] + rest
            rc = subprocess.call(cmd)
            with open(args.json) as f:
                res = json.load(f)
        save(kernels)
        table(res, copy)
        return rc
    if args.table:
        with open(args.table) as f:
            res = json.load(f)
        copy = args.copy_gbs or res.get("copy_gbs")
        if not copy:
            raise SystemExit("reductions.py: no copy bandwidth in the file; pass --copy-gbs")
        table(res, copy)
        return 0
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
