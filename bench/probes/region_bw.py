"""Achieved bandwidth of each timed region of earlier benchmark runs.

The results JSON (bench/results/*-unseen-seed*.json) holds each region's
kernel time; the bytes it moves come from re-generating the task's kernels
here (bench/gen_tasks.py with the run's seed, kb-export on the meta device,
`kb-rewrite codegen`: the job's input and output shapes). Lists the regions
below --below TB/s, slowest first, to find plans worth a probe on the GPU.

    python3 bench/probes/region_bw.py --kb-rewrite build/bin/kb-rewrite \\
        --python /usr/bin/python3 --work /tmp/bw bench/results/*-unseen-seed*.json
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--kb-rewrite", required=True)
    ap.add_argument("--python", default=sys.executable, help="an interpreter with torch, for kb-export")
    ap.add_argument("--work", default="/tmp/kb-region-bw")
    ap.add_argument("--below", type=float, default=2.5, help="TB/s")
    ap.add_argument("--min-ms", type=float, default=0.02)
    args = ap.parse_args()
    rows = []
    for path in args.results:
        m = re.search(r"seed(\d+)", path)
        if not m:
            continue
        seed = m.group(1)
        tasks_dir = os.path.join(args.work, seed, "tasks")
        if not os.path.isdir(tasks_dir):
            subprocess.run([args.python, os.path.join(ROOT, "bench", "gen_tasks.py"), "--count", "150",
                            "--seed", seed, "-o", tasks_dir], check=True, capture_output=True)
        with open(path) as f:
            res = json.load(f)
        for t in res["tasks"]:
            if not t["set"].startswith("gen") or not t.get("regions"):
                continue
            stem = t["task"][:-3]
            gdir = os.path.join(args.work, seed, "graphs")
            graph = os.path.join(gdir, stem + ".graph.txt")
            if not os.path.exists(graph):
                r = subprocess.run([os.path.join(ROOT, "tools", "kb-export", "kb-export"),
                                    os.path.join(tasks_dir, t["task"]), "-o", gdir, "--device", "meta",
                                    "--python", args.python], capture_output=True, text=True)
                if r.returncode:
                    continue
            cdir = os.path.join(args.work, seed, "cg", stem)
            if not os.path.isdir(cdir):
                subprocess.run([args.kb_rewrite, "codegen", graph, "-o", cdir], capture_output=True)
            for reg in t["regions"]:
                job = os.path.join(cdir, reg["name"] + ".job.json")
                if not reg.get("kernel_ms") or not os.path.exists(job):
                    continue
                with open(job) as f:
                    j = json.load(f)
                b = sum(4 * numel(x["shape"]) for x in j["inputs"] + j["outputs"])
                plan = j["candidate"]["source"].split("\n")[1][3:]
                tbs = b / reg["kernel_ms"] / 1e9
                rows.append((tbs, reg["kernel_ms"], reg.get("eager_ms") or 0, seed, stem, reg["name"],
                             " -> ".join(reg["ops"]) if isinstance(reg["ops"], list) else reg["ops"],
                             b / 1e6, plan))
    rows.sort()
    for tbs, ms, ems, seed, stem, name, ops, mb, plan in rows:
        if tbs < args.below and ms >= args.min_ms:
            print(f"{tbs:5.2f} TB/s {ms:7.3f} ms (ATen {ems:6.3f}) {mb:8.1f} MB  {seed} {stem[:40]} {name}: {ops}\n"
                  f"        {plan[:220]}")
    print(f"{len(rows)} regions; {sum(1 for r in rows if r[0] < args.below and r[1] >= args.min_ms)} below "
          f"{args.below} TB/s and at least {args.min_ms} ms")


if __name__ == "__main__":
    main()
