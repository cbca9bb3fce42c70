#!/usr/bin/env python3
"""Issue 26's yardstick: the Python API on real models in eval mode.

For each model (a bench/models/*.py file, KernelBench layout) in eval mode,
in one process and on one GPU: eager, torch.compile (default backend),
kb_rewrite.optimize() and torch.compile(backend="kb_rewrite"), each as
median CUDA-event milliseconds over --runs calls after warm-up, its time to
first call (seconds from the call that builds it to the first output) and
the extra GPU memory it holds after that call, and correctness against
eager under the written policy (fp32 1e-4; bf16 1e-2 with --dtype bf16,
under torch.autocast with cache_enabled=False so the casts are traced).

    python3 bench/python_api.py --models 1,10 --runs 20 --json out.json
"""

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import kb_rewrite  # noqa: E402
from kb_rewrite import backend  # noqa: E402


def load_task(number):
    models = os.path.join(ROOT, "bench", "models")
    path = next(os.path.join(models, f) for f in sorted(os.listdir(models))
                if f.startswith(f"{number}_") and f.endswith(".py"))
    spec = importlib.util.spec_from_file_location(f"bench_model_{number}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return os.path.basename(path)[:-3], mod


def timed(fn, args, runs):
    """(median CUDA-event ms, median host ms): the host time is the call's
    own, from entry to return, with the GPU idle before it (a replay's
    launch returns at once, so it is the Python and guard time a call
    spends before its work reaches the GPU)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times, host = [], []
    for _ in range(runs):
        start.record()
        t0 = time.perf_counter()
        fn(*args)
        host.append((time.perf_counter() - t0) * 1e3)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), round(statistics.median(host), 4)


def first_call(build, args):
    """(callable, seconds to the first output, extra GPU bytes held)."""
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    t0 = time.perf_counter()
    fn = build()
    out = fn(*args)
    torch.cuda.synchronize()
    return fn, out, time.perf_counter() - t0, torch.cuda.memory_allocated() - before


def close(a, b, tol):
    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    return all(torch.allclose(x.float(), y.float(), rtol=tol, atol=tol)
               for x, y in zip(a, b) if isinstance(x, torch.Tensor))


def max_err(a, b):
    """The largest |a - b| over the outputs: where the tolerance is not met
    by torch.compile either (bf16 through 12 layers), the errors compare."""
    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    errs = [(x.float() - y.float()).abs().max().item()
            for x, y in zip(a, b) if isinstance(x, torch.Tensor) and x.numel()]
    return max(errs) if errs else 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="1,10", help="bench/models numbers")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32")
    p.add_argument("--json")
    args = p.parse_args()
    tol = 1e-4 if args.dtype == "fp32" else 1e-2
    results = []
    for number in args.models.split(","):
        name, task = load_task(number)
        torch.manual_seed(0)
        model = task.Model(*task.get_init_inputs()).cuda().eval()
        inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
        ctx = (torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False)
               if args.dtype == "bf16" else torch.no_grad())
        row = {"model": name, "dtype": args.dtype}
        with torch.no_grad(), ctx:
            ref = model(*inputs)
            row["eager_ms"], row["eager_host_ms"] = timed(model, inputs, args.runs)
            variants = {
                "compile": lambda: torch.compile(model),
                "optimize": lambda: kb_rewrite.optimize(model, inputs, quiet=True),
                "kb_backend": lambda: torch.compile(model, backend="kb_rewrite",
                                                    dynamic=False),
            }
            for key, build in variants.items():
                torch._dynamo.reset()
                backend.compiled_graphs.clear()
                try:
                    fn, out, first_s, extra = first_call(build, inputs)
                except Exception as exc:  # reported, the others still run
                    row[key] = {"error": f"{type(exc).__name__}: {exc}"[:400]}
                    continue
                entry = {"first_call_s": round(first_s, 2), "extra_gpu_mb": round(extra / 1e6, 1),
                         "correct": close(out, ref, tol),
                         "max_abs_err": float(f"{max_err(out, ref):.3g}")}
                entry["ms"], entry["host_ms"] = timed(fn, inputs, args.runs)
                if key == "optimize":
                    entry["regions"] = fn.kb_stats["regions"]
                if key == "kb_backend":
                    entry["graphs"] = len(backend.compiled_graphs)
                    entry["verified_regions"] = sum(
                        g.kb_stats["regions"].get("verified", 0) for g in backend.compiled_graphs)
                entry["vs_eager"] = round(row["eager_ms"] / entry["ms"], 3)
                row[key] = entry
                del fn
        for key in ("optimize", "kb_backend"):
            if "ms" in row.get(key, {}) and "ms" in row.get("compile", {}):
                row[key]["vs_compile"] = round(row["compile"]["ms"] / row[key]["ms"], 3)
        print(json.dumps(row), flush=True)
        results.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
