#!/usr/bin/env python3
"""Every kernel kb-rewrite emits for every fixture graph must compile.

    compile_all.py KB_REWRITE KB_VERIFY FIXTURE_DIR [--arch sm_75,sm_90]

Runs `kb-rewrite codegen` on each *.graph.txt under FIXTURE_DIR, then
`kb-verify --compile` (static checks + NVRTC, no GPU) on each emitted job for
each architecture. Prints 'N passed, M failed'; exit 1 on any failure.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kb_rewrite")
    ap.add_argument("kb_verify")
    ap.add_argument("fixtures")
    ap.add_argument("--arch", default="sm_75,sm_90")
    args = ap.parse_args()
    graphs = sorted(glob.glob(os.path.join(args.fixtures, "**", "*.graph.txt"),
                              recursive=True))
    passed = failed = kernels = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, g in enumerate(graphs):
            out = os.path.join(tmp, str(i))
            p = subprocess.run([args.kb_rewrite, "codegen", g, "-o", out],
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(f"FAIL codegen {g}: {p.stderr.strip()}")
                failed += 1
                continue
            jobs = sorted(glob.glob(os.path.join(out, "*.job.json")))
            kernels += len(jobs)
            if not jobs:
                continue
            # One kb-verify process per graph: its start (libtorch) dominates.
            c = subprocess.run([args.kb_verify, "--compile", *jobs, "--arch", args.arch],
                               capture_output=True, text=True)
            lines = [json.loads(l) for l in c.stdout.splitlines() if l.strip()]
            if len(lines) != len(jobs) * len(args.arch.split(",")):
                failed += 1
                print(f"FAIL {g}: {c.stderr[-2000:]}")
                continue
            for r in lines:
                if r["status"] == "compiled":
                    passed += 1
                else:
                    failed += 1
                    print(f"FAIL {g} {os.path.basename(r['file'])} [{r['arch']}]: {r['log'][:2000]}")
    print(f"{len(graphs)} graphs, {kernels} kernels")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
