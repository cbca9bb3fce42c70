"""Probe: the same graphs' kernels under several `kb-rewrite codegen` knobs.

Each variant is a name and the codegen arguments it adds
(`--variants "base:;u4:--outputs-per-thread 4;b1024:--row-block 1024"`).
Every graph is generated once per variant; the kernels whose plan (the
second comment line of the .cu) matches --plan are verified and timed by
kb-verify (five trials, then the kernel and the region's ATen ops with the
L2 flushed before each launch: a wrong kernel is reported, never timed).
Variants whose kernel text is byte-identical to an earlier variant's are
timed again anyway: the spread between them is the noise of the timing.

  python3 bench/probes/codegen_knobs.py --kb-rewrite B --kb-verify V \\
      --variants "base:;u4:--outputs-per-thread 4" [--plan "one thread per output"] \\
      [--json F] GRAPH.txt...

The table printed last gives each region's time per variant and the best.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile


def plan_of(cu):
    """The plan line of a generated kernel (its second comment line)."""
    with open(cu) as f:
        f.readline()
        return f.readline().strip("/ \n")


def jobs_matching(out, pattern):
    """(job, plan) of the jobs in `out` whose plan matches `pattern`, by
    region number."""
    jobs = sorted(glob.glob(os.path.join(out, "kb_region_*.job.json")),
                  key=lambda p: int(re.search(r"_(\d+)\.job", p).group(1)))
    found = []
    for job in jobs:
        plan = plan_of(job[:-len(".job.json")] + ".cu")
        if not pattern or re.search(pattern, plan):
            found.append((job, plan))
    return found


def verify(kb_verify, job):
    """kb-verify's verdict on one job: status, kernel and ATen medians."""
    r = subprocess.run([kb_verify, "--job", job, "--no-cache"],
                       capture_output=True, text=True, timeout=300)
    try:
        v = json.loads(r.stdout)
    except ValueError:
        return {"status": "verify_failed", "detail": r.stderr[-200:]}
    c, e = v.get("candidate_timing") or {}, v.get("eager_timing") or {}
    return {"status": v.get("status"), "kernel_ms": c.get("median_ms"),
            "aten_ms": e.get("median_ms"), "detail": (v.get("detail") or "")[:200],
            # elements whose bits differ from eager's float32 result
            "eager_mismatches": v.get("eager_mismatches")}


def probe(graph, variants, pattern, kb_rewrite, kb_verify, work):
    rows = []
    for name, extra in variants:
        out = os.path.join(work, f"{os.path.basename(graph)}.{name}")
        r = subprocess.run([kb_rewrite, "codegen", graph, "-o", out] + extra,
                           capture_output=True, text=True)
        jobs = jobs_matching(out, pattern) if r.returncode == 0 else []
        if not jobs:
            rows.append({"variant": name, "status": "not_generated",
                         "detail": (r.stdout + r.stderr)[-200:]})
            continue
        for job, plan in jobs:
            region = os.path.basename(job)[:-len(".job.json")]
            with open(job[:-len(".job.json")] + ".cu", "rb") as f:
                digest = hashlib.sha1(f.read()).hexdigest()[:12]
            row = {"variant": name, "region": region, "plan": plan[:160],
                   "kernel_sha": digest}
            row.update(verify(kb_verify, job))
            rows.append(row)
            print(f"{os.path.basename(graph)} {region} {name}: {row['status']} "
                  f"{row.get('kernel_ms')} ms (ATen {row.get('aten_ms')}), "
                  f"{row.get('eager_mismatches')} bits differ from eager", flush=True)
    return rows


def parse_variants(text):
    out = []
    for part in text.split(";"):
        if part.strip():
            name, _, args = part.partition(":")
            out.append((name.strip(), shlex.split(args)))
    return out


def table(result, names):
    lines = ["graph region " + " ".join(names) + " aten best"]
    for g, rows in result.items():
        regions = sorted({r["region"] for r in rows if "region" in r})
        for reg in regions:
            ms = {r["variant"]: r.get("kernel_ms") for r in rows
                  if r.get("region") == reg and r.get("status") == "accepted"}
            aten = next((r.get("aten_ms") for r in rows if r.get("region") == reg
                         and r.get("aten_ms")), None)
            cells = [f"{ms[n]:.4f}" if ms.get(n) else "-" for n in names]
            best = min(ms, key=ms.get) if ms else "-"
            lines.append(f"{os.path.basename(g)} {reg} " + " ".join(cells) +
                         (f" {aten:.4f}" if aten else " -") + f" {best}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--kb-rewrite", required=True)
    ap.add_argument("--kb-verify", required=True)
    ap.add_argument("--variants", required=True)
    ap.add_argument("--plan", default="", help="regex over the kernels' plan lines")
    ap.add_argument("--json")
    args = ap.parse_args()
    variants = parse_variants(args.variants)
    result = {}
    with tempfile.TemporaryDirectory() as work:
        for g in args.graphs:
            result[g] = probe(g, variants, args.plan, args.kb_rewrite, args.kb_verify, work)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump({"variants": args.variants, "plan": args.plan,
                               "graphs": result}, f, indent=1)
    print(table(result, [n for n, _ in variants]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
