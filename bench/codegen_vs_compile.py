#!/usr/bin/env python3
"""Emitted kernels vs eager ATen vs torch.compile, in one process (GPU host).

    codegen_vs_compile.py JOBDIR [--min-mb 256] [--runs 50] [--json OUT]

For each kb-verify job in JOBDIR (written by `kb-rewrite codegen`):
  * the region's ops are rebuilt as a Python function from the job's
    reference IR (aten ops through torch.ops.aten, constants inline): that is
    the eager chain, and torch.compile (inductor, default mode) compiles it;
  * the emitted kernel is compiled with nvcc to a cubin and launched through
    the CUDA driver API with the job's launch rule;
  * all three are checked against each other, then timed with CUDA events on
    the same stream (median of --runs after warm-up, L2 flushed before each),
    and a device-to-device copy is timed in the same run for the bandwidth
    reference.
Regions moving fewer than --min-mb megabytes are skipped (launch-bound).
"""
import argparse
import ctypes
import glob
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

import torch

# ---- reference IR -> Python -------------------------------------------------

LINE = re.compile(r"\s*(.+?)\s*=\s*([\w:]+)(?:\[value=(.*)\])?\((.*)\)\s*$")


def call_args(name, args):
    """Positional IR operands as a Python call: keyword-only schema
    arguments (add's alpha, gelu's approximate) become keywords."""
    kw = {}
    for schema in torch._C._jit_get_schemas_for_operator("aten::" + name):
        if len(schema.arguments) == len(args) and "out" not in schema.overload_name:
            for k, a in enumerate(schema.arguments):
                if a.kwarg_only:
                    kw[k] = a.name
    return [f"{kw[k]}={a}" if k in kw else a for k, a in enumerate(args)]


def ir_to_fn(ir):
    """A Python function equivalent to the TorchScript IR of a region."""
    lines = ir.strip().split("\n")
    params = re.findall(r"(%\w+) :", lines[0])
    env_code = []
    ret = None
    for line in lines[1:]:
        line = line.strip()
        if line.startswith("return"):
            ret = re.findall(r"%\w+", line)
            continue
        m = LINE.match(line)
        lhs, op, value, args = m.group(1), m.group(2), m.group(3), m.group(4)
        outs = [o.split(":")[0].strip() for o in lhs.split(",")]
        argv = [a.strip() for a in args.split(",") if a.strip()]
        py = lambda n: "v_" + n[1:].replace(".", "_")
        if op == "prim::Constant":
            ty = lhs.split(":")[1].strip()
            v = "None" if value is None else (str(bool(int(value))) if ty == "bool" else value)
            env_code.append(f"{py(outs[0])} = {v}")
        elif op == "prim::ListConstruct":
            env_code.append(f"{py(outs[0])} = [{', '.join(py(a) for a in argv)}]")
        else:
            name = op.split("::")[1]
            call = f"torch.ops.aten.{name}({', '.join(call_args(name, [py(a) for a in argv]))})"
            if len(outs) == 1:
                env_code.append(f"{py(outs[0])} = {call}")
            else:
                env_code.append(f"{', '.join(py(o) for o in outs)} = {call}")
    src = "def region({}):\n".format(", ".join("v_" + p[1:] for p in params))
    src += "".join("    " + c + "\n" for c in env_code)
    src += "    return ({},)\n".format(", ".join("v_" + r[1:] for r in ret))
    scope = {"torch": torch}
    exec(src, scope)
    return scope["region"], src


# ---- the emitted kernel through the driver API ------------------------------

class Driver:
    def __init__(self):
        self.cu = ctypes.CDLL("libcuda.so.1")
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # a current context

    def check(self, r, what):
        if r != 0:
            raise RuntimeError(f"{what}: CUDA driver error {r}")

    def load(self, cubin):
        mod = ctypes.c_void_p()
        self.check(self.cu.cuModuleLoadData(ctypes.byref(mod), cubin), "cuModuleLoadData")
        return mod

    def function(self, mod, name):
        fn = ctypes.c_void_p()
        self.check(self.cu.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()),
                   "cuModuleGetFunction")
        return fn

    def launch(self, fn, grid, block, ptrs, stream):
        vals = [ctypes.c_void_p(p) for p in ptrs]
        args = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
        self.check(self.cu.cuLaunchKernel(fn, *grid, *block, 0, ctypes.c_void_p(stream),
                                          args, None), "cuLaunchKernel")


def launch_dims(exprs, sm_count):
    env = {"min": min, "max": max, "ceil_div": lambda a, b: -(-a // b), "sm_count": sm_count}
    return [int(eval(e, {"__builtins__": {}}, env)) for e in exprs]


def compile_cubin(source, arch, tmp):
    cu = os.path.join(tmp, "k.cu")
    out = os.path.join(tmp, "k.cubin")
    open(cu, "w").write(source)
    subprocess.run(["nvcc", "-cubin", f"-arch={arch}", "-O3", "-o", out, cu], check=True,
                   capture_output=True)
    return open(out, "rb").read()


# ---- timing -------------------------------------------------------------------

def time_ms(fn, runs, flush):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        flush()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def make_input(spec, gen):
    shape = spec["shape"]
    t = torch.randn(shape, device="cuda", generator=gen)
    if spec.get("distribution") == "positive":
        t = t.abs() + 0.1
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jobdir")
    ap.add_argument("--min-mb", type=float, default=256)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--json")
    ap.add_argument("--only", default="", help="regex over job file names")
    args = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    sm = props.multi_processor_count
    arch = "sm_%d%d" % torch.cuda.get_device_capability(0)
    drv = Driver()
    stream = torch.cuda.current_stream().cuda_stream
    scratch = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")
    flush = lambda: scratch.zero_()
    src = torch.empty(2**28, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = time_ms(lambda: dst.copy_(src), args.runs, flush)
    copy_gbs = 2 * src.numel() * 4 / copy_ms / 1e6
    del src, dst
    print(f"{props.name}, torch {torch.__version__}, copy {copy_gbs:.0f} GB/s "
          f"(1 GiB device-to-device, median of {args.runs})", flush=True)
    rows = []
    gen = torch.Generator(device="cuda")
    for path in sorted(glob.glob(os.path.join(args.jobdir, "*.json"))):
        name = os.path.basename(path)[: -len(".job.json")]
        if args.only and not re.search(args.only, name):
            continue
        job = json.load(open(path))
        mb = sum(4 * math.prod(t["shape"]) for t in job["inputs"] + job["outputs"]) / 1e6
        if mb < args.min_mb:
            continue
        row = {"region": name, "mb": round(mb, 1)}
        try:
            gen.manual_seed(1)
            inputs = [make_input(s, gen) for s in job["inputs"]]
            fn, _ = ir_to_fn(job["reference"])
            with torch.no_grad():
                expect = fn(*[t.clone() for t in inputs])
                compiled = torch.compile(fn)
                got_c = compiled(*[t.clone() for t in inputs])
            outs = [torch.empty(o["shape"], device="cuda") for o in job["outputs"]]
            with tempfile.TemporaryDirectory() as tmp:
                cubin = compile_cubin(job["candidate"]["source"], arch, tmp)
            fnk = drv.function(drv.load(cubin), job["candidate"]["entry"])
            launch = job["candidate"]["launch"]
            grid = launch_dims(launch["grid"], sm)
            block = launch_dims(launch["block"], sm)
            ptrs = [t.data_ptr() for t in inputs + outs]
            run_k = lambda: drv.launch(fnk, grid, block, ptrs, stream)
            run_k()
            torch.cuda.synchronize()
            for a, b, c in zip(outs, expect, got_c):
                b = b.reshape(a.shape)
                row["max_err_kernel"] = float((a - b).abs().nan_to_num(0).max())
                row["max_err_compile"] = float((c.reshape(a.shape) - b).abs().nan_to_num(0).max())
            with torch.no_grad():
                row["kernel_ms"] = time_ms(run_k, args.runs, flush)
                row["eager_ms"] = time_ms(lambda: fn(*inputs), args.runs, flush)
                row["compile_ms"] = time_ms(lambda: compiled(*inputs), args.runs, flush)
            row["kernel_pct_copy"] = 100 * (mb / row["kernel_ms"]) / copy_gbs  # MB/ms = GB/s
            row["compile_pct_copy"] = 100 * (mb / row["compile_ms"]) / copy_gbs
            row["vs_eager"] = row["eager_ms"] / row["kernel_ms"]
            row["vs_compile"] = row["compile_ms"] / row["kernel_ms"]
            print(f"{name[:52]:52} {mb:8.0f} MB kernel {row['kernel_ms']:.3f} ms "
                  f"({row['kernel_pct_copy']:.0f}%) eager {row['eager_ms']:.3f} "
                  f"compile {row['compile_ms']:.3f} ({row['compile_pct_copy']:.0f}%) "
                  f"x{row['vs_eager']:.2f} eager x{row['vs_compile']:.2f} compile "
                  f"err {row['max_err_kernel']:.2g}/{row['max_err_compile']:.2g}", flush=True)
        except Exception as e:  # report and continue with the next region
            row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            print(f"{name[:52]:52} ERROR {row['error']}", flush=True)
        rows.append(row)
        torch.cuda.empty_cache()
        torch._dynamo.reset()
    result = {"gpu": props.name, "torch": torch.__version__, "copy_gbs": copy_gbs,
              "runs": args.runs, "regions": rows}
    if args.json:
        json.dump(result, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
