#!/usr/bin/env python3
"""The paper's experiment as one command (docs/model.md, "The paper's experiment").

    python3 bench/paper.py --model-url URL --model NAME --kernelbench DIR \\
        --levels 1,2 --tasks 1-5 --regimes zero-shot,profile,refine,agent \\
        --samples 1,2,4,8 --json out.json [--work DIR]
    python3 bench/paper.py --replay OLD_WORK --json again.json   # no server

For every task (a KernelBench file, exported by tools/kb-export, or with
--graphs a folder of exported graphs) and every regime, `kb-rewrite rewrite
--answers model --strategy REGIME --samples N` (N the largest of --samples)
asks the model for every region; only the model's kernels answer (the code
generator's are timed beside them, never used). Sample k of every region is
one attempt: an attempt solves the task when kb-verify accepted its kernel
for every region (on a GPU; without one, only compiled is known and the
table says so). From the n attempts, pass@k for each k of --samples is the
unbiased estimate 1 - C(n-c, k) / C(n, k) (c attempts solved), not k
reruns. On a GPU the ModelNew built from the chosen model kernels is then
checked as KernelBench does (5 trials, fresh inputs, allclose 1e-4) and
timed against eager: a task counts correct only when that check passes too.

The work folder keeps everything: the export, each regime's rewrite (its
transcript.jsonl: every request, reply, check and verdict), result.json per
task and regime (a rerun resumes: finished ones are read back), the verdict
cache by kernel hash (the same kernel is verified once per GPU), the task
outcomes by the hash of the kernels a ModelNew runs (checked once), run.json.
--replay re-runs every task and regime from OLD_WORK's transcripts with no
server, running kb-verify again on the recorded replies (--replay-verify),
and recomputes the table: a replay that only reprinted verdicts would prove
nothing. Writes --json, a table (--table, markdown, beside the paper's own
figures) and a plot of correct vs n (--svg).
"""

import argparse
import glob
import hashlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import kernelbench as kbench  # noqa: E402  (task lists, tools, check helpers)

REGIMES = ("zero-shot", "profile", "refine", "agent")
# The paper's figures as its abstract states them (issue 28): Qwen2.5-Coder-7B
# on KernelBench levels 1-3, first 10 tasks each.
PAPER = {
    "zero-shot": "30% correct",
    "profile": "43% correct, 27% faster than eager",
    "refine": "not stated",
    "agent": "the only regime to solve level-2 fusion: 3/10",
    "best-of-n": "3% -> 33% correct from n=1 to n=8",
}
# A candidate's status, best first: an attempt takes its best candidate's.
RANK = {"accepted": 0, "compiled_only": 1, "wrong_result": 2, "rejected": 2,
        "compile_error": 3, "check_failed": 4, "truncated": 5, "no_reply": 6}


class ServerDown(Exception):
    """No request of a task was answered."""


def pass_at_k(n, c, k):
    """The unbiased estimate of P(at least one of k attempts solves)."""
    if k > n:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def read_jsonl(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def attempts_of(transcript, regions, n):
    """Per region: the status of each of the n attempts (its best
    candidate), the accepted candidates' times, the code generator's time."""
    per = {r: {"attempts": ["no_reply"] * n, "accepted_ms": [], "codegen_ms": None}
           for r in regions}
    for rec in transcript:
        reg = per.get(rec.get("region"))
        if reg is None:
            continue
        if rec["kind"] == "selection" and rec.get("codegen_ms") is not None:
            reg["codegen_ms"] = rec["codegen_ms"]
        if rec["kind"] not in ("check", "verdict") or "attempt" not in rec:
            continue
        if rec["kind"] == "check" and rec.get("ok"):
            continue  # its verdict follows
        if rec["kind"] == "verdict":
            status = "accepted" if rec.get("accepted") else rec.get("status") or "rejected"
        else:
            status = rec.get("status") or "check_failed"
        a = rec["attempt"]
        if 0 <= a < n and RANK.get(status, 2) < RANK.get(reg["attempts"][a], 2):
            reg["attempts"][a] = status
        if status == "accepted" and rec.get("kernel_ms") is not None:
            reg["accepted_ms"].append(rec["kernel_ms"])
    return per


def outcome_key(task_path, out, report):
    """The task and the kernels its ModelNew runs: which regions run a
    kernel, and the sources of those kernels."""
    h = hashlib.sha256(os.path.abspath(task_path).encode())
    for reg in report["regions"]:
        h.update(f"|{reg['name']}:{reg['status']}".encode())
        src = os.path.join(out, "kernels", reg["name"] + ".cu")
        if reg["status"] in ("verified", "unverified") and os.path.exists(src):
            with open(src, "rb") as f:
                h.update(f.read())
    return h.hexdigest()[:32]


def gpu_present():
    return shutil.which("nvidia-smi") is not None and subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True).returncode == 0


def export_task(args, path, name, work):
    graph = os.path.join(work, name + ".graph.txt")
    if os.path.exists(graph):
        return graph
    if args.exported:
        # Exported before (the simulated server's pool was built from them).
        stem = os.path.splitext(os.path.basename(path))[0]
        level = os.path.basename(os.path.dirname(path))
        done = os.path.join(args.exported, level, stem + ".graph.txt")
        if os.path.exists(done):
            os.makedirs(work, exist_ok=True)
            for ext in (".graph.txt", ".params.json"):
                shutil.copy(done[:-len(".graph.txt")] + ext,
                            os.path.join(work, name + ext))
            return graph
    os.makedirs(work, exist_ok=True)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "kb-export", "kb_export.py"),
                        path, "-o", work, "--name", name,
                        "--device", "cuda" if args.gpu else "cpu"],
                       capture_output=True, text=True, timeout=args.stage_timeout)
    if r.returncode != 0:
        raise RuntimeError("export failed: " + (r.stderr or r.stdout)[-1500:])
    return graph


def rewrite(args, graph, out, regime, nmax, replay_transcript):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [args.kb_rewrite, "rewrite", graph, "-o", out, "--answers", "model",
           "--strategy", regime, "--samples", str(nmax), "--rounds", str(args.rounds),
           "--verdict-cache", os.path.join(args.work, "verdicts"),
           "--store", os.path.join(out, "store"), "--quiet"]
    if args.kb_verify:
        cmd += ["--kb-verify", args.kb_verify]
    if replay_transcript:
        cmd += ["--replay", replay_transcript, "--replay-verify"]
    else:
        cmd += ["--model-url", args.model_url, "--model", args.model,
                "--max-tokens", str(args.max_tokens)]
        if args.model_seed:
            cmd += ["--model-seed", str(args.model_seed)]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.stage_timeout)
    wall = time.time() - t0
    if r.returncode != 0:
        raise RuntimeError(f"kb-rewrite exited {r.returncode}: " + (r.stderr or r.stdout)[-1500:])
    return wall


def check_child(args):
    """KernelBench's check and timing of the ModelNew in --check-child."""
    import torch
    task = kbench.load_module(args.task_file, "kb_paper_task")
    new = kbench.load_module(os.path.join(args.check_child, "model_new.py"), "kb_paper_new")
    init = task.get_init_inputs()
    torch.manual_seed(42)
    model = task.Model(*init).cuda()
    torch.manual_seed(42)
    model_new = new.ModelNew(*init).cuda()
    ok, err = True, 0.0
    for trial in range(5):
        torch.manual_seed(1000 + trial)
        inputs = kbench.make_inputs(task, True)
        with torch.no_grad():
            ref, out = kbench.flat(model(*inputs)), kbench.flat(model_new(*inputs))
        for a, b in zip(ref, out):
            if a.shape != b.shape:
                ok = False
                continue
            err = max(err, float((a.double() - b.double()).abs().max()))
            ok &= bool(torch.allclose(a, b, atol=1e-4, rtol=1e-4))
    res = {"correct": ok, "max_abs_err": err}
    torch.manual_seed(2000)
    inputs = kbench.make_inputs(task, True)
    flush = torch.empty(64 * 1024 * 1024, dtype=torch.float32, device="cuda")
    for k, ms in kbench.time_interleaved({"eager": model, "new": model_new}, inputs,
                                         args.runs, 5, flush).items():
        res[k + "_ms"] = ms
    with open(args.check_out, "w") as f:
        json.dump(res, f)


def run_one(args, task, regime, nmax, old_work):
    """One task under one regime: result.json in its folder (resumable)."""
    tdir = os.path.join(args.work, task["key"])
    out = os.path.join(tdir, regime)
    done = os.path.join(tdir, regime + ".result.json")
    if os.path.exists(done):
        with open(done) as f:
            res = json.load(f)
        if res.get("config") == args.config_key:
            return res
    res = {"key": task["key"], "level": task["level"], "task": task["file"],
           "regime": regime, "n": nmax, "config": args.config_key}
    try:
        if task["graph"]:
            graph = task["graph"]
        elif old_work:
            graph = os.path.join(old_work, task["key"], task["key"] + ".graph.txt")
        else:
            graph = export_task(args, task["path"], task["key"], tdir)
        replay = os.path.join(old_work, task["key"], regime, "transcript.jsonl") if old_work else ""
        res["wall_s"] = round(rewrite(args, graph, out, regime, nmax, replay), 2)
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        transcript = read_jsonl(os.path.join(out, "transcript.replay.jsonl" if replay
                                             else "transcript.jsonl"))
    except (RuntimeError, OSError, subprocess.TimeoutExpired, ValueError) as e:
        res["error"] = str(e)[-1500:]
        write_json(done, res)
        return res
    replies = [t for t in transcript if t["kind"] == "response"]
    if replies and all(t.get("error") for t in replies):
        # Nothing answered: not a result (a rerun asks again), the run stops.
        raise ServerDown(replies[0]["error"])
    res["gpu"] = bool(report.get("gpu"))
    # The regions the model was asked for: a region without a kernel spec
    # (not generated, or its ATen ops kept by the numerics policy) has no
    # entry point to ask for, and runs ATen in every regime alike.
    asked = {t["region"] for t in transcript if t["kind"] == "request"}
    regions = [r for r in report["regions"] if r["name"] in asked]
    res["regions_not_asked"] = [r["name"] for r in report["regions"] if r["name"] not in asked]
    names = [r["name"] for r in regions]
    per = attempts_of(transcript, names, nmax)
    res["regions"] = [dict(name=r["name"], ops=r.get("ops"), anchor=r.get("anchor", ""),
                           **per[r["name"]]) for r in regions]
    goal = "accepted" if res["gpu"] else "compiled_only"
    good = lambda s: RANK.get(s, 9) <= RANK[goal]  # noqa: E731
    res["solved_attempts"] = sum(
        1 for a in range(nmax) if names and all(good(per[r]["attempts"][a]) for r in names))
    res["tokens"] = sum(t.get("prompt_tokens", 0) + t.get("completion_tokens", 0)
                        for t in transcript if t["kind"] == "response")
    res["requests"] = sum(1 for t in transcript if t["kind"] == "request")
    # Kernels that passed: accepted (GPU) or, with no GPU, compiled.
    res["passing_kernels"] = sum(
        1 for t in transcript if t["kind"] == "verdict" and
        (t.get("accepted") or (not res["gpu"] and t.get("status") == "compiled_only")))
    speed = [r["codegen_ms"] / ms for r in res["regions"] if r["codegen_ms"]
             for ms in r["accepted_ms"] if ms > 0]
    res["model_vs_codegen"] = statistics.geometric_mean(speed) if speed else None
    if task["level"] == 2:
        res["fusion_solved"] = any(r["anchor"] and any(good(s) for s in r["attempts"])
                                   for r in res["regions"])
    # KernelBench's own check of the ModelNew built from the model's kernels,
    # once per set of kernels (regimes often choose the same ones).
    if res["gpu"] and task["path"] and res["solved_attempts"] and not args.no_check:
        key = outcome_key(task["path"], out, report)
        cached = os.path.join(args.work, "outcomes", key + ".json")
        if os.path.exists(cached):
            with open(cached) as f:
                res["check"] = dict(json.load(f), cached=True)
        else:
            co = os.path.join(tdir, regime + ".check.json")
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "--check-child",
                                out, "--task-file", task["path"], "--check-out", co,
                                "--runs", str(args.runs)],
                               capture_output=True, text=True, timeout=args.stage_timeout)
            if r.returncode == 0 and os.path.exists(co):
                with open(co) as f:
                    res["check"] = json.load(f)
                os.makedirs(os.path.dirname(cached), exist_ok=True)
                write_json(cached, res["check"])
            else:
                res["check"] = {"correct": False, "error": (r.stderr or r.stdout)[-1500:]}
        if not res["check"]["correct"]:
            res["solved_attempts"] = 0  # the end-to-end check overrules
    write_json(done, res)
    return res


def summarize(results, ks):
    summary = {}
    for res in results:
        s = summary.setdefault(res["regime"], {}).setdefault(
            f"level{res['level']}", {"tasks": 0, "errors": 0, "no_region": 0, "pass": {},
                                     "faster": 0, "fusion_solved": 0, "tokens": 0,
                                     "wall_s": 0.0, "passing_kernels": 0, "checked": 0,
                                     "speed": []})
        s["tasks"] += 1
        if "error" in res:
            s["errors"] += 1
            continue
        if not res["regions"]:
            s["no_region"] += 1
        for k in ks:
            p = pass_at_k(res["n"], res["solved_attempts"], k)
            if p is not None:
                s["pass"].setdefault(str(k), []).append(p)
        chk = res.get("check") or {}
        s["checked"] += bool(chk)
        s["faster"] += bool(chk.get("correct") and chk.get("new_ms")
                            and chk["new_ms"] < chk["eager_ms"])
        s["fusion_solved"] += bool(res.get("fusion_solved"))
        s["tokens"] += res["tokens"]
        s["wall_s"] += res["wall_s"]
        s["passing_kernels"] += res["passing_kernels"]
        if res["model_vs_codegen"]:
            s["speed"].append(res["model_vs_codegen"])
    for per_level in summary.values():
        for s in per_level.values():
            # A task whose run failed (the harness's error, not the
            # model's answer) is left out of the rates and shown apart.
            ran = s["ran"] = s["tasks"] - s["errors"]
            s["pass"] = {k: sum(v) / ran for k, v in s["pass"].items()} if ran else {}
            n = s["passing_kernels"]
            s["tokens_per_passing_kernel"] = round(s["tokens"] / n) if n else None
            s["wall_s_per_passing_kernel"] = round(s["wall_s"] / n, 2) if n else None
            s["model_vs_codegen"] = (statistics.geometric_mean(s["speed"])
                                     if s["speed"] else None)
            del s["speed"]
    return summary


def table(summary, ks, gpu):
    what = "correct" if gpu else "compiled (no GPU: kb-verify could not run the kernels)"
    lines = [f"| regime | level | tasks | {what} at n=" + ", ".join(map(str, ks)) +
             " | faster than eager | level-2 fusion solved | tokens / passing kernel"
             " | s / passing kernel | model vs code generator | paper |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for regime in REGIMES:
        for level, s in sorted(summary.get(regime, {}).items()):
            p = " / ".join(f"{100 * s['pass'][str(k)]:.0f}%" if str(k) in s["pass"] else "-"
                           for k in ks)
            fus = str(s["fusion_solved"]) if level == "level2" else "-"
            ran = s["ran"]
            fast = f"{s['faster']}/{ran}" if s["checked"] else "-"
            tasks = f"{ran} (+{s['errors']} failed to run)" if s["errors"] else str(ran)
            tok, sec = s["tokens_per_passing_kernel"], s["wall_s_per_passing_kernel"]
            spd = s["model_vs_codegen"]
            lines.append(f"| {regime} | {level[5:]} | {tasks} | {p} | {fast} | {fus} | "
                         f"{tok if tok else '-'} | {sec if sec else '-'} | "
                         f"{f'{spd:.2f}x' if spd else '-'} | {PAPER[regime]} |")
    lines.append(f"| best-of-n | all | | the pass@k columns above | | | | | | "
                 f"{PAPER['best-of-n']} |")
    return "\n".join(lines) + "\n"


def svg(summary, ks):
    w, h, m = 560, 360, 50
    colors = {"zero-shot": "#1f77b4", "profile": "#ff7f0e", "refine": "#2ca02c",
              "agent": "#d62728"}
    kmax = max(ks)
    x = lambda k: m + (w - 2 * m) * (math.log2(k) / math.log2(kmax) if kmax > 1 else 0)  # noqa
    y = lambda p: h - m - (h - 2 * m) * p  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'font-family="sans-serif" font-size="11">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<line x1="{m}" y1="{h - m}" x2="{w - m}" y2="{h - m}" stroke="black"/>',
             f'<line x1="{m}" y1="{m}" x2="{m}" y2="{h - m}" stroke="black"/>',
             f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle">samples n (pass@n)</text>',
             f'<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" '
             f'text-anchor="middle">tasks correct</text>']
    for k in ks:
        parts.append(f'<text x="{x(k):.1f}" y="{h - m + 14}" text-anchor="middle">{k}</text>')
    for p in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<text x="{m - 6}" y="{y(p) + 4:.1f}" text-anchor="end">{int(p * 100)}%</text>')
    row = 0
    for regime in REGIMES:
        for level, s in sorted(summary.get(regime, {}).items()):
            pts = [(x(k), y(s["pass"][str(k)])) for k in ks if str(k) in s["pass"]]
            dash = "" if level == "level1" else ' stroke-dasharray="5,3"'
            parts.append(f'<polyline fill="none" stroke="{colors[regime]}" stroke-width="2"{dash} '
                         'points="' + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + '"/>')
            parts.append(f'<text x="{w - m + 4}" y="{m + 14 * row}" fill="{colors[regime]}">'
                         f'{regime} L{level[5:]}</text>')
            row += 1
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def task_list(args):
    tasks = []
    ids = kbench.parse_ids(args.tasks)
    levels = [int(v) for v in args.levels.split(",") if v]
    if args.graphs:
        for level in levels:
            for g in sorted(glob.glob(os.path.join(args.graphs, f"level{level}", "*.graph.txt"))):
                stem = os.path.basename(g)[:-len(".graph.txt")]
                m = re.match(r"(\d+)_", stem)
                if m and int(m.group(1)) in ids:
                    tasks.append({"key": f"level{level}_{stem}", "level": level, "file": stem,
                                  "graph": os.path.abspath(g), "path": ""})
    else:
        for set_, _, path in kbench.task_files(args.kernelbench, levels, ids):
            stem = os.path.splitext(os.path.basename(path))[0]
            tasks.append({"key": f"{set_}_{stem}", "level": int(set_[5:]), "file": stem,
                          "graph": "", "path": os.path.abspath(path)})
    return tasks


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-url", default=os.environ.get("KB_MODEL_URL", ""))
    p.add_argument("--model", default=os.environ.get("KB_MODEL", ""))
    p.add_argument("--kernelbench", default=os.path.join(ROOT, "bench", "kernelbench"))
    p.add_argument("--graphs", help="exported graphs in level<N>/ folders instead of tasks")
    p.add_argument("--exported", help="the tasks' graphs already exported, in level<N>/ "
                   "folders (used instead of exporting again)")
    p.add_argument("--levels", default="1,2,3")
    p.add_argument("--tasks", default="1-10")
    p.add_argument("--regimes", default=",".join(REGIMES))
    p.add_argument("--samples", default="1,2,4,8")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--max-tokens", type=int, default=4096)
    p.add_argument("--model-seed", type=int, default=0)
    p.add_argument("--work", default="/tmp/kb-paper")
    p.add_argument("--replay", help="an earlier run's --work: replay it, verifying again")
    p.add_argument("--json")
    p.add_argument("--table", help="markdown table (default: printed)")
    p.add_argument("--svg", help="plot of correct vs n")
    p.add_argument("--no-check", action="store_true", help="skip the end-to-end check")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--stage-timeout", type=int, default=900)
    p.add_argument("--kb-rewrite", default="")
    p.add_argument("--kb-verify", default="")
    p.add_argument("--check-child", help=argparse.SUPPRESS)
    p.add_argument("--task-file", help=argparse.SUPPRESS)
    p.add_argument("--check-out", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.check_child:
        return check_child(args)
    old = None
    if args.replay:
        with open(os.path.join(args.replay, "run.json")) as f:
            old = json.load(f)["config"]
        for k in ("levels", "tasks", "regimes", "samples", "rounds", "graphs", "kernelbench"):
            setattr(args, k, old[k])
        args.model, args.model_url = old["model"], ""
        if os.path.abspath(args.replay) == os.path.abspath(args.work):
            sys.exit("paper.py: --replay needs another --work than the run it replays")
    elif not args.model_url:
        sys.exit("paper.py: --model-url (or $KB_MODEL_URL) is required, or --replay OLD_WORK")
    build = os.path.join(ROOT, "build", "bin")
    args.kb_rewrite = kbench.find_tool("kb-rewrite", args.kb_rewrite or os.environ.get(
        "KB_REWRITE", ""), [os.path.join(build, "kb-rewrite")])
    args.kb_verify = kbench.find_tool("kb-verify", args.kb_verify or os.environ.get(
        "KB_VERIFY", ""), [os.path.join(build, "kb-verify")])
    if not args.kb_rewrite:
        sys.exit("paper.py: kb-rewrite not found (build it, or --kb-rewrite PATH)")
    regimes = [r for r in args.regimes.split(",") if r]
    bad = [r for r in regimes if r not in REGIMES]
    if bad:
        sys.exit(f"paper.py: unknown regime {bad[0]} ({', '.join(REGIMES)})")
    ks = sorted({int(k) for k in args.samples.split(",")})
    nmax = max(ks)
    args.gpu = gpu_present()
    config = {k: getattr(args, k) for k in ("levels", "tasks", "regimes", "samples", "rounds",
                                            "graphs", "kernelbench", "model")}
    args.config_key = json.dumps(config, sort_keys=True) + ("|replay" if old else "")
    os.makedirs(args.work, exist_ok=True)
    write_json(os.path.join(args.work, "run.json"), {"config": config})
    tasks = task_list(args)
    if not tasks:
        sys.exit("paper.py: no task matches --levels/--tasks")
    results = []
    for task in tasks:
        for regime in regimes:
            try:
                res = run_one(args, task, regime, nmax, args.replay)
            except ServerDown as e:
                sys.exit(f"paper.py: [{task['key']}] {regime}: no request was answered "
                         f"({str(e)[:300]}); start the server or check --model-url, "
                         "then rerun (finished tasks are kept)")
            results.append(res)
            state = res.get("error", "").splitlines()[0][:100] if "error" in res else (
                f"{res['solved_attempts']}/{res['n']} attempts solved, "
                f"{len(res['regions'])} regions, {res['wall_s']} s")
            print(f"[{task['key']}] {regime}: {state}", flush=True)
    summary = summarize(results, ks)
    text = table(summary, ks, any(r.get("gpu") for r in results))
    doc = {"config": config, "gpu": args.gpu, "replay_of": args.replay or None,
           "paper": PAPER, "summary": summary, "results": results}
    write_json(os.path.join(args.work, "run.json"), doc)
    if args.json:
        write_json(args.json, doc)
    if args.table:
        with open(args.table, "w") as f:
            f.write(text)
    else:
        print(text, end="")
    if args.svg:
        with open(args.svg, "w") as f:
            f.write(svg(summary, ks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
