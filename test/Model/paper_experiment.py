#!/usr/bin/env python3
"""bench/paper.py against the simulated model server, with the answer
recomputed independently (lit helper, test/Model/paper-experiment.test).

    paper_experiment.py --graphs DIR --work DIR --kb-rewrite K --rates R
        [--flavor F] [--seed S] -- PAPER_ARGS...
    paper_experiment.py --graphs DIR --work DIR --kb-rewrite K   # recount only

Builds the server's pool from the graphs (kb-rewrite rewrite --verify off:
the same regions the experiment's rewrite forms), starts
test/fixtures/model-server/simulated_server.py, runs bench/paper.py
--graphs DIR --work DIR --model-url ... PAPER_ARGS, stops the server. Then,
from the transcripts only (the server names each reply's outcome in its
prose), it recounts every task's solved attempts (an attempt solves a
region when one of its candidates was a correct reply, or without a GPU a
reply that compiles: correct or wrong) and pass@k as a product
(prod_{i<k} (n-c-i)/(n-i)), and compares them with paper.py's run.json.
Prints "recount: N results agree" or each disagreement (exit 1).
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
server_py = os.path.join(root, "test", "fixtures", "model-server", "simulated_server.py")


def recount(work, gpu, rates=None):
    with open(os.path.join(work, "run.json")) as f:
        run = json.load(f)
    good = {"correct"} if gpu else {"correct", "wrong"}
    bad = []
    ks = sorted({int(k) for k in run["config"]["samples"].split(",")})
    for res in run["results"]:
        if "error" in res:
            bad.append(f"{res['key']} {res['regime']}: error {res['error'][:200]}")
            continue
        out = os.path.join(work, res["key"], res["regime"])
        path = os.path.join(out, "transcript.replay.jsonl")
        if not os.path.exists(path):
            path = os.path.join(out, "transcript.jsonl")
        recs = [json.loads(line) for line in open(path) if line.strip()]
        outcome = {}
        for r in recs:
            if r["kind"] == "response" and r.get("text"):
                m = re.search(r"simulated: (\w+)", r["text"])
                if m:
                    outcome[(r["region"], r["candidate"])] = m.group(1)
        solved = {}
        for r in recs:
            if r["kind"] == "check":
                key = (r["region"], r["attempt"])
                solved.setdefault(key, False)
                solved[key] |= outcome.get((r["region"], r["candidate"])) in good
        regions = {r["name"] for r in res["regions"]}
        n = res["n"]
        c = sum(1 for a in range(n)
                if regions and all(solved.get((reg, a), False) for reg in regions))
        if c != res["solved_attempts"]:
            bad.append(f"{res['key']} {res['regime']}: paper.py {res['solved_attempts']}, "
                       f"recount {c} of {n}")
        res["recount"] = c
    for regime, levels in run["summary"].items():
        for level, s in levels.items():
            rows = [r for r in run["results"] if r["regime"] == regime
                    and f"level{r['level']}" == level and "recount" in r]
            for k in ks:
                if k > max((r["n"] for r in rows), default=0):
                    continue
                vals = []
                for r in rows:
                    p_none = 1.0
                    for i in range(k):
                        p_none *= max(r["n"] - r["recount"] - i, 0) / (r["n"] - i)
                    vals.append(1 - p_none)
                want = sum(vals) / (s["tasks"] - s["errors"])
                if abs(want - s["pass"][str(k)]) > 1e-9:
                    bad.append(f"{regime} {level} pass@{k}: paper.py {s['pass'][str(k)]}, "
                               f"recount {want}")
    # What the configured rates predict for the one-shot regimes (each
    # attempt draws once per region): 1 - (1 - p^R)^k, beside what came.
    if rates:
        p = rates.get("correct", 0) + (0 if gpu else rates.get("wrong", 0))
        for regime in ("zero-shot", "profile"):
            for level, s in sorted(run["summary"].get(regime, {}).items()):
                rows = [r for r in run["results"] if r["regime"] == regime
                        and f"level{r['level']}" == level and "recount" in r]
                want = [sum(1 - (1 - p ** len(r["regions"])) ** k if r["regions"] else 0
                            for r in rows) / max(s["tasks"] - s["errors"], 1) for k in ks]
                print(f"rates predict {regime} {level}: " +
                      " / ".join(f"{100 * w:.0f}%" for w in want) + "; observed " +
                      " / ".join(f"{100 * s['pass'][str(k)]:.0f}%" for k in ks
                                 if str(k) in s["pass"]))
    for b in bad:
        print("DISAGREE", b)
    if not bad:
        print(f"recount: {len(run['results'])} results agree")
    return not bad


def in_parallel(commands):
    """Runs the commands (exports: a Python process and a trace each; pool
    rewrites), a few at a time: serially they took ~160 s of run87's 360."""
    workers = max(1, min(8, (os.cpu_count() or 2) - 1))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
        for c in [ex.submit(subprocess.run, cmd, check=True, stdout=subprocess.DEVNULL)
                  for cmd in commands]:
            c.result()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", required=True,
                    help="exported graphs in level<N>/ folders; with --kernelbench "
                         "the folder the tasks are exported to")
    ap.add_argument("--kernelbench", help="KernelBench tasks (--levels/--tasks in "
                    "PAPER_ARGS): exported here first, paper.py checks their ModelNew")
    ap.add_argument("--levels", default="1,2")
    ap.add_argument("--tasks", default="1-5")
    ap.add_argument("--work", required=True)
    ap.add_argument("--rates", help="absent: only recount an existing --work")
    ap.add_argument("--flavor", default="vllm")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--kb-rewrite", required=True)
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    if not args.rates:
        with open(os.path.join(args.work, "run.json")) as f:
            return 0 if recount(args.work, json.load(f)["gpu"]) else 1
    pool = os.path.join(args.work + ".pool")
    source_args = ["--graphs", args.graphs]
    if args.kernelbench:
        sys.path.insert(0, os.path.join(root, "bench"))
        import kernelbench as kbench
        ids = kbench.parse_ids(args.tasks)
        levels = [int(v) for v in args.levels.split(",")]
        exports = []
        for set_, _, path in kbench.task_files(args.kernelbench, levels, ids):
            stem = os.path.splitext(os.path.basename(path))[0]
            out = os.path.join(args.graphs, set_)
            if not os.path.exists(os.path.join(out, stem + ".graph.txt")):
                exports.append([sys.executable,
                                os.path.join(root, "tools", "kb-export", "kb_export.py"),
                                path, "-o", out, "--name", stem, "--device",
                                "cuda" if shutil.which("nvidia-smi") else "cpu"])
        in_parallel(exports)
        source_args = ["--kernelbench", args.kernelbench, "--levels", args.levels,
                       "--tasks", args.tasks, "--exported", args.graphs]
    rewrites = []
    for g in sorted(glob.glob(os.path.join(args.graphs, "level*", "*.graph.txt"))):
        name = os.path.basename(os.path.dirname(g)) + "_" + os.path.basename(g)[:-10]
        rewrites.append([args.kb_rewrite, "rewrite", g, "-o", os.path.join(pool, name),
                         "--verify", "off", "--no-model", "--quiet"])
    in_parallel(rewrites)
    server = subprocess.Popen([sys.executable, server_py, "--pool", pool, "--rates", args.rates,
                               "--flavor", args.flavor, "--seed", args.seed],
                              stdout=subprocess.PIPE, text=True)
    try:
        word, port = server.stdout.readline().split()
        assert word == "PORT"
        sys.stdout.flush()
        code = subprocess.run([sys.executable, os.path.join(root, "bench", "paper.py"),
                               "--work", args.work] + source_args + [
                               "--kb-rewrite", args.kb_rewrite,
                               "--model-url", f"http://127.0.0.1:{port}",
                               "--model", f"simulated-{args.flavor}"] + rest).returncode
    finally:
        server.terminate()
        server.wait(timeout=10)
    if code != 0:
        return code
    with open(os.path.join(args.work, "run.json")) as f:
        gpu = json.load(f)["gpu"]
    rates = {k: float(v) for k, v in (kv.split("=") for kv in args.rates.split(","))}
    return 0 if recount(args.work, gpu, rates) else 1


if __name__ == "__main__":
    sys.exit(main())
