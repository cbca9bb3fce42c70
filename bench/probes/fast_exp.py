"""Which --fast-math exp and division a softmax kernel can take (GPU host).

    fast_exp.py KB_REWRITE KB_VERIFY GRAPH... [--json OUT]

For each graph, `kb-rewrite codegen --fast-math` writes its kernels and
jobs; every job whose source calls kb::softmax_exp is verified by kb-verify
once per variant of the prelude's KB_FAST_MATH softmax helpers (the exp
and the division replaced in the job's source text only), and the verdict,
the worst error against the bound and the median time are printed. The
question (session 41, seed 20261235 task 2): __expf's error grows with
|x - max| (2 + 1.17|x| ulp), which kb-verify's per-element bound refused on
one element; does an exp with a range reduction (expf) cost time that
__expf saves, and which of the two costs is the division's?
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

FAST_EXP = "__device__ __forceinline__ float softmax_exp(float x) { return __expf(x); }"
FAST_DIV = "__device__ __forceinline__ float softmax_div(float a, float s) { return __fdividef(a, s); }"
VARIANTS = {
    "expf_fdiv": (FAST_EXP, "__device__ __forceinline__ float softmax_exp(float x) { return expf(x); }"),
    "fexp_div": (FAST_DIV, "__device__ __forceinline__ float softmax_div(float a, float s) { return a / s; }"),
    "expf_div": None,  # both exact: the default kernel's helpers
}


def variant_source(src, name):
    if name == "fast":
        return src
    if name == "expf_div":
        return variant_source(variant_source(src, "expf_fdiv"), "fexp_div")
    old, new = VARIANTS[name]
    assert src.count(old) == 1, f"prelude line not found once: {old}"
    return src.replace(old, new)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kb_rewrite")
    ap.add_argument("kb_verify")
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for gi, g in enumerate(args.graphs):
            out = os.path.join(tmp, str(gi))
            subprocess.run([args.kb_rewrite, "codegen", "--fast-math", g, "-o", out],
                           capture_output=True, check=True)
            for j in sorted(glob.glob(os.path.join(out, "*.job.json"))):
                job = json.load(open(j))
                if "kb::softmax_exp(" not in job["candidate"]["source"]:
                    continue
                for name in ["fast", "expf_fdiv", "fexp_div", "expf_div"]:
                    v = dict(job)
                    v["candidate"] = dict(job["candidate"])
                    v["candidate"]["source"] = variant_source(job["candidate"]["source"], name)
                    path = j + "." + name + ".json"
                    json.dump(v, open(path, "w"))
                    p = subprocess.run([args.kb_verify, "--job", path, "--no-cache"],
                                       capture_output=True, text=True, timeout=300)
                    try:
                        verdict = json.loads(p.stdout)
                    except ValueError:
                        verdict = {"status": "no verdict", "message": p.stderr[-300:]}
                    t = verdict.get("candidate_timing") or {}
                    e = verdict.get("eager_timing") or {}
                    row = {"graph": os.path.basename(g), "job": os.path.basename(j), "variant": name,
                           "status": verdict.get("status"), "ms": t.get("median_ms"),
                           "eager_ms": e.get("median_ms"),
                           "detail": str(verdict.get("detail") or verdict.get("message") or "")[:200],
                           "max_abs_error": verdict.get("max_abs_error"), "bound": verdict.get("bound")}
                    rows.append(row)
                    print(f"{row['graph']}:{row['job']} {name:10s} {row['status']} "
                          f"{row['ms']} ms (eager {row['eager_ms']}) err {row['max_abs_error']} bound {row['bound']} {row['detail']}", flush=True)
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
