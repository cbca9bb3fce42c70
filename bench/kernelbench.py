#!/usr/bin/env python3
"""KernelBench end to end: export -> kb-rewrite rewrite -> load -> check -> time.

    python3 bench/kernelbench.py --kernelbench bench/kernelbench --levels 1,2,3 \\
        --tasks 1-10 [--json out.json] [--runs 50] [--work DIR]

For every task file KernelBench/level<N>/<id>_*.py (a `Model`, `get_inputs()`
and `get_init_inputs()`):
  export   tools/kb-export (traced on the GPU, training mode, seed 0)
  rewrite  kb-rewrite rewrite (kernels verified by kb-verify when present)
  load     model_new.py's ModelNew, built like Model under the same seed
  check    as KernelBench does: 5 trials, fresh inputs per trial, allclose
           at atol=rtol=1e-4 and at the older 1e-2, under torch.no_grad()
  time     eager Model, torch.compile(Model) (inductor, default mode) and
           ModelNew in one process: CUDA events around each call, warm-up,
           L2 flushed before every call, median of --runs calls

Each task runs in its own process (a crash or a poisoned CUDA context costs
one task); a task that fails is reported with its stage and error and the
run goes on. Prints progress and a table; --json writes everything,
including fast_0/fast_1/fast_1.5 against eager and against torch.compile and
geometric means per level.
"""

import argparse
import glob
import importlib.util
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_tool(name, given, candidates):
    if given:
        return given
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return shutil.which(name) or ""


def task_files(kb_root, levels, task_ids):
    out = []
    for level in levels:
        for path in glob.glob(os.path.join(kb_root, "KernelBench", f"level{level}", "*.py")):
            m = re.match(r"(\d+)_", os.path.basename(path))
            if m and int(m.group(1)) in task_ids:
                out.append((level, int(m.group(1)), path))
    return sorted(out)


def parse_ids(text):
    ids = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        ids.update(range(int(lo), int(hi or lo) + 1))
    return ids


# ---- child: one task -----------------------------------------------------------

def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def to_cuda(xs):
    import torch
    return [x.cuda() if isinstance(x, torch.Tensor) else x for x in xs]


def make_inputs(task, on_gpu):
    """get_inputs() on the GPU by default: KernelBench draws them on the CPU
    and copies them over, which for L1-4 (an 8 GB matrix) takes minutes per
    task; the distribution is the same, the values differ (--cpu-inputs for
    KernelBench's own draw)."""
    import torch
    if on_gpu:
        with torch.device("cuda"):
            return to_cuda(task.get_inputs())
    return to_cuda(task.get_inputs())


def flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def time_interleaved(fns, inputs, runs, warmup, flush):
    """Median ms per call of each fn, timed round-robin: clock and thermal
    drift over a run moved back-to-back medians of one and the same cuBLAS
    call by 1-2% (L1-7: eager 4.104 ms, compiled 4.015 ms), so every round
    times each fn once, starting at a rotating position."""
    import torch
    names = list(fns)
    times = {n: [] for n in names}
    with torch.no_grad():
        for n in names:
            for _ in range(warmup):
                fns[n](*inputs)
        torch.cuda.synchronize()
        for i in range(runs):
            events = []
            for k in range(len(names)):
                n = names[(i + k) % len(names)]
                flush.zero_()  # evict L2 (60 MB on an H200) between calls
                s = torch.cuda.Event(enable_timing=True)
                e = torch.cuda.Event(enable_timing=True)
                s.record()
                out = fns[n](*inputs)
                e.record()
                del out
                events.append((n, s, e))
            torch.cuda.synchronize()
            for n, s, e in events:
                times[n].append(s.elapsed_time(e))
    return {n: statistics.median(t) for n, t in times.items()}


def mark(args, stage):
    """Leaves the stage beside the result: a task killed by --task-timeout
    is reported with the stage it was in."""
    if args.child_out:
        with open(args.child_out + ".stage", "w") as f:
            f.write(stage)
    return stage


def run_task(args, level, task_path, result):
    import torch
    stem = os.path.splitext(os.path.basename(task_path))[0]
    name = f"level{level}_{stem}"
    work = os.path.join(args.work, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    stage = mark(args, "export")
    t0 = time.time()
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "kb-export", "kb_export.py"),
                        task_path, "-o", work, "--name", name, "--device", "cuda"],
                       capture_output=True, text=True, timeout=args.stage_timeout)
    result["export_s"] = round(time.time() - t0, 2)
    if r.returncode != 0:
        raise StageError(stage, (r.stderr or r.stdout)[-2000:])

    stage = mark(args, "rewrite")
    t0 = time.time()
    cmd = [args.kb_rewrite, "rewrite", os.path.join(work, name + ".graph.txt"),
           "-o", os.path.join(work, "rewritten"), "--verify", args.verify, "--quiet"]
    if args.kb_verify:
        cmd += ["--kb-verify", args.kb_verify]
    if args.no_cuda_graphs:
        cmd += ["--no-cuda-graphs"]
    if args.fast_math:
        cmd += ["--fast-math"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.stage_timeout)
    result["rewrite_s"] = round(time.time() - t0, 2)
    if r.returncode != 0:
        raise StageError(stage, (r.stderr or r.stdout)[-2000:])
    with open(os.path.join(work, "rewritten", "report.json")) as f:
        report = json.load(f)
    result["regions"] = [{k: reg.get(k) for k in ("name", "ops", "status", "kernel_ms",
                                                  "eager_ms", "detail")}
                         for reg in report["regions"]]
    if not report["model_new"]:
        raise StageError(stage, report["model_new_note"])
    for f in ("kb_runtime.py", "kb_runtime_ext.cpp"):
        with open(os.path.join(ROOT, "runtime", f)) as a, \
                open(os.path.join(work, "rewritten", f)) as b:
            if a.read() != b.read():
                result["warning"] = (f"{args.kb_rewrite} embeds an older {f} than "
                                     "runtime/: rebuild it (scripts/pack-kb-rewrite)")

    stage = mark(args, "load")
    t0 = time.time()
    task = load_module(task_path, "kb_task_" + name)
    new = load_module(os.path.join(work, "rewritten", "model_new.py"), "kb_new_" + name)
    init = task.get_init_inputs()
    torch.manual_seed(args.seed)
    model = task.Model(*init).cuda()
    torch.manual_seed(args.seed)
    model_new = new.ModelNew(*init).cuda()
    torch.manual_seed(args.seed)
    model_ref = task.Model(*init).cuda()  # for torch.compile (own BN state)
    # The runtime extension is built once per machine (cached after that);
    # the first call compiles the kernels (cached too): both count as load.
    t1 = time.time()
    new.kb_runtime.extension()
    result["extension_s"] = round(time.time() - t1, 2)
    torch.manual_seed(args.seed)
    warm = make_inputs(task, not args.cpu_inputs)
    with torch.no_grad():
        model_new(*warm)
    torch.cuda.synchronize()
    del warm
    result["load_s"] = round(time.time() - t0, 2)

    stage = mark(args, "check")
    ok4 = ok2 = True
    max_err = 0.0
    for trial in range(args.trials):
        torch.manual_seed(1000 + trial)
        inputs = make_inputs(task, not args.cpu_inputs)
        with torch.no_grad():
            ref = flat(model(*inputs))
            out = flat(model_new(*inputs))
        if len(ref) != len(out) or any(a.shape != b.shape for a, b in zip(ref, out)):
            raise StageError(stage, f"output shapes differ: {[tuple(a.shape) for a in ref]} "
                                    f"vs {[tuple(b.shape) for b in out]}")
        for a, b in zip(ref, out):
            max_err = max(max_err, float((a.double() - b.double()).abs().max()))
            ok4 &= bool(torch.allclose(a, b, atol=1e-4, rtol=1e-4))
            ok2 &= bool(torch.allclose(a, b, atol=1e-2, rtol=1e-2))
        del ref, out, inputs
    result.update(correct_1e4=ok4, correct_1e2=ok2, max_abs_err=max_err)
    if not args.time:
        return
    stage = mark(args, "time")
    torch.manual_seed(2000)
    inputs = make_inputs(task, not args.cpu_inputs)
    flush = torch.empty(64 * 1024 * 1024, dtype=torch.float32, device="cuda")  # 256 MB
    fns = {"eager": model, "new": model_new}
    if not args.no_compile:
        t0 = time.time()
        compiled = torch.compile(model_ref)
        with torch.no_grad():
            compiled(*inputs)  # inductor compiles here
        torch.cuda.synchronize()
        result["inductor_s"] = round(time.time() - t0, 1)
        fns["compile"] = compiled
    for n, ms in time_interleaved(fns, inputs, args.runs, args.warmup, flush).items():
        result[n + "_ms"] = ms
    if not args.no_compile:
        # The baseline under the same check: does inductor's code (its own
        # layouts and algorithms) pass KernelBench's 1e-4 against eager?
        torch.manual_seed(1000)
        check_in = make_inputs(task, not args.cpu_inputs)
        with torch.no_grad():
            ref = flat(model(*check_in))
            got = flat(compiled(*check_in))
        result["compile_max_abs_err"] = max(
            float((a.double() - b.double()).abs().max()) for a, b in zip(ref, got))
        result["compile_correct_1e4"] = all(
            bool(torch.allclose(a, b, atol=1e-4, rtol=1e-4)) for a, b in zip(ref, got))
    result["fallbacks"] = {"regions": model_new._kb.fallbacks,
                           "forward": model_new._kb.reasons}
    result["layout"] = model_new._kb.layout_ms
    result["library"] = {str(k): v for k, v in model_new._kb.library_ms.items()}
    graphs = model_new._kb.graphs
    result["cuda_graph"] = graphs.timing if graphs is not None else None


class StageError(Exception):
    def __init__(self, stage, message):
        super().__init__(message)
        self.stage = stage


def child_main(args):
    result = {"level": args.level, "task": os.path.basename(args.child)}
    try:
        run_task(args, args.level, args.child, result)
    except StageError as e:
        result["error"] = {"stage": e.stage, "message": str(e)[-2000:]}
    except Exception as e:  # report, never crash the run
        stage = "time" if "correct_1e4" in result else (
            "check" if "load_s" in result else "load")
        result["error"] = {"stage": stage,
                           "message": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"}
    with open(args.child_out, "w") as f:
        json.dump(result, f)


# ---- parent ------------------------------------------------------------------------

def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarize(results):
    levels = {}
    for r in results:
        levels.setdefault(r["level"], []).append(r)
    summary = {}
    for level, rs in sorted(levels.items()):
        n = len(rs)
        s = {"tasks": n,
             "correct_1e4": sum(bool(r.get("correct_1e4")) for r in rs),
             "correct_1e2": sum(bool(r.get("correct_1e2")) for r in rs)}
        for base in ("eager", "compile"):
            sp = [r[base + "_ms"] / r["new_ms"] for r in rs
                  if r.get("correct_1e4") and r.get(base + "_ms") and r.get("new_ms")]
            s[f"geomean_vs_{base}"] = geomean(sp)
            for p in (0, 1, 1.5):
                s[f"fast_{p}_vs_{base}"] = sum(x > p for x in sp) / n
        # The baselines' own ratio, measured in the same run.
        s["geomean_eager_over_compile"] = geomean(
            [r["eager_ms"] / r["compile_ms"] for r in rs
             if r.get("eager_ms") and r.get("compile_ms")])
        summary[f"level{level}"] = s
    return summary


def fmt(x, spec):
    return format(x, spec) if isinstance(x, (int, float)) else "-"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kernelbench", default=os.path.join(ROOT, "bench", "kernelbench"),
                   help="a KernelBench checkout (KernelBench/levelN/*.py)")
    p.add_argument("--levels", default="1,2,3")
    p.add_argument("--tasks", default="1-10")
    p.add_argument("--work", default="/tmp/kb-kernelbench")
    p.add_argument("--json")
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--kb-rewrite", default="")
    p.add_argument("--kb-verify", default="")
    p.add_argument("--verify", default="auto", choices=["auto", "on", "off"])
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    p.add_argument("--no-cuda-graphs", action="store_true")
    p.add_argument("--fast-math", action="store_true",
                   help="kb-rewrite --fast-math (approximate exp/division, as inductor)")
    p.add_argument("--cpu-inputs", action="store_true",
                   help="draw get_inputs() on the CPU as KernelBench does (slow for large inputs)")
    p.add_argument("--no-time", dest="time", action="store_false")
    p.add_argument("--task-timeout", type=int, default=600)
    p.add_argument("--stage-timeout", type=int, default=300)
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--child-out", help=argparse.SUPPRESS)
    p.add_argument("--level", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    args.kb_rewrite = find_tool("kb-rewrite", args.kb_rewrite, [
        os.path.join(ROOT, "build-static", "bin", "kb-rewrite"),
        os.path.join(ROOT, "build", "bin", "kb-rewrite")])
    args.kb_verify = find_tool("kb-verify", args.kb_verify, [
        "/tmp/kb-verify-build/bin/kb-verify", os.path.join(ROOT, "build", "bin", "kb-verify")])
    if args.child:
        return child_main(args)
    if not args.kb_rewrite:
        sys.exit("kernelbench.py: error: no kb-rewrite (build it, or pass --kb-rewrite)")
    tasks = task_files(args.kernelbench, [int(x) for x in args.levels.split(",")],
                       parse_ids(args.tasks))
    if not tasks:
        sys.exit(f"kernelbench.py: error: no tasks under {args.kernelbench}/KernelBench")
    os.makedirs(args.work, exist_ok=True)
    import torch
    gpu = torch.cuda.get_device_name(0)
    print(f"{len(tasks)} tasks on {gpu}; torch {torch.__version__}; kb-rewrite "
          f"{args.kb_rewrite}; kb-verify {args.kb_verify or '(none)'}", flush=True)
    results = []
    t_all = time.time()
    for i, (level, tid, path) in enumerate(tasks):
        out = os.path.join(args.work, f"result-{level}-{tid}.json")
        for stale in (out, out + ".stage"):
            if os.path.exists(stale):
                os.remove(stale)
        cmd = [sys.executable, os.path.abspath(__file__), "--child", path, "--child-out", out,
               "--level", str(level)] + [a for a in sys.argv[1:]]
        t0 = time.time()
        try:
            subprocess.run(cmd, timeout=args.task_timeout)
            with open(out) as f:
                r = json.load(f)
        except subprocess.TimeoutExpired:
            try:
                with open(out + ".stage") as f:
                    stage = f.read().strip()
            except OSError:
                stage = "start"
            r = {"level": level, "task": os.path.basename(path),
                 "error": {"stage": stage,
                           "message": f"timed out after {args.task_timeout} s (--task-timeout)"}}
        except (OSError, ValueError) as e:
            r = {"level": level, "task": os.path.basename(path),
                 "error": {"stage": "crash", "message": f"no result ({e})"}}
        r["wall_s"] = round(time.time() - t0, 1)
        results.append(r)
        err = r.get("error")
        if r.get("warning"):
            print(f"warning: {r['warning']}", flush=True)
        status = (f"FAILED at {err['stage']}: {err['message'].strip().splitlines()[-1][:100]}"
                  if err else
                  f"{'ok' if r.get('correct_1e4') else 'WRONG'} eager {fmt(r.get('eager_ms'), '.3f')} "
                  f"compile {fmt(r.get('compile_ms'), '.3f')} new {fmt(r.get('new_ms'), '.3f')} ms")
        print(f"[{i + 1}/{len(tasks)}] L{level}-{tid} {os.path.basename(path)[:44]:44} "
              f"{status} ({r['wall_s']} s)", flush=True)
        if args.json:  # after every task: a run cut short keeps its results
            with open(args.json, "w") as f:
                json.dump({"gpu": gpu, "torch": torch.__version__,
                           "command": " ".join(sys.argv), "partial": True,
                           "tasks": results}, f, indent=1)
    summary = summarize(results)
    print(f"\n{'task':50} {'1e-4':5} {'eager':>8} {'compile':>8} {'new':>8} {'vs eager':>9} "
          f"{'vs comp':>8}")
    for r in results:
        e, c, n = r.get("eager_ms"), r.get("compile_ms"), r.get("new_ms")
        print(f"L{r['level']}-{r['task'][:45]:47} {str(bool(r.get('correct_1e4'))):5} "
              f"{fmt(e, '8.3f')} {fmt(c, '8.3f')} {fmt(n, '8.3f')} "
              f"{fmt(e / n if e and n else None, '8.2f')}x {fmt(c / n if c and n else None, '7.2f')}x")
    for level, s in summary.items():
        print(f"{level}: correct {s['correct_1e4']}/{s['tasks']} (1e-2: {s['correct_1e2']}), "
              f"geomean vs eager {fmt(s['geomean_vs_eager'], '.2f')}x, vs compile "
              f"{fmt(s['geomean_vs_compile'], '.2f')}x (eager/compile "
              f"{fmt(s['geomean_eager_over_compile'], '.2f')}x), fast_1 vs eager "
              f"{fmt(s['fast_1_vs_eager'], '.2f')}, vs compile {fmt(s['fast_1_vs_compile'], '.2f')}")
    print(f"total {time.time() - t_all:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": gpu, "torch": torch.__version__, "command": " ".join(sys.argv),
                       "summary": summary, "tasks": results}, f, indent=1)


if __name__ == "__main__":
    main()
