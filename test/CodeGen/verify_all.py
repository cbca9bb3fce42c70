#!/usr/bin/env python3
"""Every kernel kb-rewrite emits for every fixture graph passes kb-verify on a GPU.

    verify_all.py KB_REWRITE KB_VERIFY FIXTURE_DIR

Runs `kb-rewrite codegen` on each *.graph.txt under FIXTURE_DIR, keeps one
job per distinct kernel (ResNet's repeated blocks emit identical ones), and
verifies them all in one `kb-verify --serve` session: five trials per job
(ordinary, large magnitudes, NaN/Inf/+-3e38 special values), against the
region's ATen ops in float64 and float32. Graphs of norms before step ops
(*_step*) are also generated in ATen's order (--aten-order-norms), and
those kernels must match eager bit for bit. Prints one line per job and
'N accepted, M rejected'; exits 1 on any rejection, 77 (skipped) without a
GPU.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile


def gpu_present():
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
        return p.returncode == 0 and "GPU" in p.stdout
    except (OSError, subprocess.TimeoutExpired):
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kb_rewrite")
    ap.add_argument("kb_verify")
    ap.add_argument("fixtures")
    args = ap.parse_args()
    if not gpu_present():
        print("verify_all: no GPU answers (nvidia-smi -L): skipped")
        return 77
    graphs = sorted(glob.glob(os.path.join(args.fixtures, "**", "*.graph.txt"), recursive=True))
    jobs, names, seen, exact = [], [], set(), set()
    with tempfile.TemporaryDirectory() as tmp:
        # Graphs of norms before step ops (*_step*) also in ATen's order,
        # whose kernels must round exactly as eager's ops do.
        runs = [(g, []) for g in graphs]
        runs += [(g, ["--aten-order-norms"]) for g in graphs if "_step" in os.path.basename(g)]
        for i, (g, flags) in enumerate(runs):
            out = os.path.join(tmp, str(i))
            subprocess.run([args.kb_rewrite, "codegen", *flags, g, "-o", out], capture_output=True)
            for j in sorted(glob.glob(os.path.join(out, "*.job.json"))):
                job = json.load(open(j))
                norm = lambda s: re.sub(r"kb_region_\d+", "K", s)
                key = hashlib.sha1((norm(job["candidate"]["source"]) + json.dumps(job["inputs"]) +
                                    norm(job["reference"])).encode()).hexdigest()
                if key in seen:
                    continue
                seen.add(key)
                # ATen's order under --aten-order-norms, and a kernel that
                # promises eager's bits (the sums of AtenReduce.cpp) in any run.
                head = job["candidate"]["source"].split("\n", 2)[1]
                if (flags and "order" in head) or "bit-identical to eager" in head:
                    exact.add(len(jobs))
                jobs.append(json.dumps(job))
                names.append(os.path.relpath(g, args.fixtures) + ":" + job["id"] +
                             (" (ATen's order)" if len(jobs) - 1 in exact else ""))
    p = subprocess.run([args.kb_verify, "--serve", "--no-cache"], input="\n".join(jobs) + "\n",
                       capture_output=True, text=True)
    verdicts = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    bad = 0
    for n, (name, v) in enumerate(zip(names, verdicts)):
        # Bit-identical to eager (what a TF32 convolution downstream needs)?
        same = v.get("eager_mismatches", -1)
        ok = v["status"] == "accepted" and (same == 0 or n not in exact)
        bad += not ok
        bits = "identical to eager" if same == 0 else (
            f"{same} elements differ from eager" if same > 0 else "")
        why = v["detail"][:300] if v["status"] != "accepted" else "ATen's order promised, " + bits
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {v['status']} {bits if ok else why}")
    if len(verdicts) != len(jobs):
        print(f"kb-verify answered {len(verdicts)} of {len(jobs)} jobs: {p.stderr[-500:]}")
        return 1
    print(f"{len(jobs) - bad} accepted, {bad} rejected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
