#!/usr/bin/env python3
"""`kb-rewrite rewrite` over every fixture graph: never a crash, always a
report, and a working model_new.py wherever the model file is at hand.

    rewrite_all.py KB_REWRITE FIXTURES [--python PY] [--max-elements N]

For each *.graph.txt: rewrite (--verify off) must exit 0 and write
manifest.json and report.md; model_new.py must exist unless the output says
why not. Graphs traced by the local torch (torch-1.13/) with inputs of at
most --max-elements elements also go through check_model_new.py on the CPU
(the graph program equals Model.forward). Prints a summary; exit 1 on any
failure.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def model_file(params_path):
    """The traced model file, looked up in this checkout by its name."""
    import json
    with open(params_path) as f:
        source = json.load(f).get("source", "")
    if not source.endswith(".py"):
        return None
    name = os.path.basename(source)
    for d in [os.path.join(ROOT, "test", "fixtures", "models")] + sorted(
            glob.glob(os.path.join(ROOT, "bench", "kernelbench", "KernelBench", "level*"))):
        if os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kb_rewrite")
    ap.add_argument("fixtures")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--max-elements", type=int, default=2_000_000)
    args = ap.parse_args()
    has_torch = subprocess.run([args.python, "-c", "import torch"],
                               capture_output=True).returncode == 0
    graphs = sorted(glob.glob(os.path.join(args.fixtures, "graphs", "**", "*.graph.txt"),
                              recursive=True))
    failures, written, checked, skipped = [], 0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, g in enumerate(graphs):
            stem = g[:-len(".graph.txt")]
            out = os.path.join(tmp, str(i))
            cmd = [args.kb_rewrite, "rewrite", g, "-o", out, "--verify", "off", "--quiet"]
            model = model_file(stem + ".params.json") if os.path.exists(
                stem + ".params.json") else None
            if model:
                cmd += ["--source", model]
            r = subprocess.run(cmd, capture_output=True, text=True)
            rel = os.path.relpath(g, args.fixtures)
            if r.returncode != 0:
                failures.append(f"{rel}: exit {r.returncode}: {r.stderr.strip()[:300]}")
                continue
            for f in ("manifest.json", "report.md", "report.html", "report.json"):
                if not os.path.exists(os.path.join(out, f)):
                    failures.append(f"{rel}: no {f}")
            if not os.path.exists(os.path.join(out, "model_new.py")):
                with open(os.path.join(out, "report.md")) as f:
                    if "model_new.py was not written:" not in f.read():
                        failures.append(f"{rel}: no model_new.py and no reason")
                if model:
                    failures.append(f"{rel}: model file {model} given, no model_new.py")
                continue
            written += 1
            if not has_torch or "/torch-1.13/" not in g:
                continue
            c = subprocess.run([args.python, os.path.join(HERE, "check_model_new.py"), out,
                                "--max-elements", str(args.max_elements)],
                               capture_output=True, text=True)
            if c.returncode == 77:
                skipped += 1
            elif c.returncode != 0:
                failures.append(f"{rel}: check_model_new: {(c.stdout + c.stderr).strip()[-400:]}")
            else:
                checked += 1
    print(f"{len(graphs)} graphs rewritten, {written} with model_new.py, "
          f"{checked} checked against Model.forward on the CPU ({skipped} skipped: too large, or float16 autocast)")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
