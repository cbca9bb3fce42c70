"""Probe (issue 22): how the chunk count of a split row kernel sets its time.

Gen task 3 (BatchNorm3d over 48 channels of 1.1M, 214 MB) and
bench/reductions.py's batch_norm2d_few_channels (48 channels of 2.2M,
425 MB) both took 0.376 ms with 1056 items (22 chunks a row): the time
followed the item count, not the bytes (bench/NOTES.md, session 17). This
generates each graph's kernels with `kb-rewrite codegen --split-chunks N` for
several N and times every split row kernel among them with kb-verify (verified as always: a wrong kernel
is reported, not timed).

With --shapes (BLOCK,PER_SM,UNROLL triples separated by ';', `kb-rewrite
codegen --split-shape`), each graph is first timed with every shape at the
heuristic's chunk count, then --chunks is swept with the fastest shape.
--quad adds a run with `--split-quad` (lanes over 4 strided rows each, read
as float4) at the heuristic's chunk count.

  python3 bench/probes/split_chunks.py --kb-rewrite B --kb-verify V \
      [--chunks 1,2,4,8,16,22,32] [--shapes "512,4,8;512,2,16"] [--json F] GRAPH.txt...
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from codegen_knobs import jobs_matching, verify


def split_jobs(out):
    """The jobs of `out` whose kernel is a split row plan (SplitRows.cpp's
    comment names it: "one block per item"), region 0 first."""
    return jobs_matching(out, "one block per item")


def probe(graph, chunks, kb_rewrite, kb_verify, work, shape="0,0,0", quad=False):
    rows = []
    for n in chunks:
        out = os.path.join(work, f"{os.path.basename(graph)}.{n}.{shape.replace(',', '_')}"
                                 f"{'.quad' if quad else ''}")
        r = subprocess.run([kb_rewrite, "codegen", "--split-chunks", str(n),
                            "--split-shape", shape, graph,
                            "-o", out] + (["--split-quad"] if quad else []),
                           capture_output=True, text=True)
        jobs = split_jobs(out) if r.returncode == 0 else []
        if not jobs:
            rows.append({"chunks": n, "shape": shape, "quad": quad, "status": "not_generated",
                         "detail": (r.stdout + r.stderr)[-200:]})
            continue
        for job, plan in jobs:
            region = os.path.basename(job)[:-len(".job.json")]
            row = {"chunks": n, "shape": shape, "quad": quad, "region": region,
                   "plan": plan[:160]}
            row.update(verify(kb_verify, job))
            rows.append(row)
            print(f"{os.path.basename(graph)} {region} chunks={n} shape={shape} quad={quad}: "
                  f"{row['status']} {row.get('kernel_ms')} ms (ATen {row.get('aten_ms')})",
                  flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--kb-rewrite", required=True)
    ap.add_argument("--kb-verify", required=True)
    ap.add_argument("--chunks", default="1,2,4,8,16,22,32")
    ap.add_argument("--shapes", default="")
    ap.add_argument("--quad", action="store_true",
                    help="also time each graph with --split-quad at the heuristic's chunks")
    ap.add_argument("--json")
    args = ap.parse_args()
    chunks = [int(c) for c in args.chunks.split(",")]
    shapes = [x.strip() for x in args.shapes.split(";") if x.strip()]
    result = {}
    with tempfile.TemporaryDirectory() as work:
        for g in args.graphs:
            if shapes:
                rows = []
                for sh in shapes:  # 0 chunks: the heuristic's count
                    rows += probe(g, [0], args.kb_rewrite, args.kb_verify, work, sh)
                timed = [r for r in rows if r.get("status") == "accepted" and r.get("kernel_ms")]
                best = min(timed, key=lambda r: r["kernel_ms"])["shape"] if timed else shapes[0]
                rows += probe(g, chunks, args.kb_rewrite, args.kb_verify, work, best)
                result[g] = rows
            else:
                result[g] = probe(g, chunks, args.kb_rewrite, args.kb_verify, work)
            if args.quad:
                result[g] += probe(g, [0], args.kb_rewrite, args.kb_verify, work, quad=True)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
