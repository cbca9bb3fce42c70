#!/usr/bin/env python3
"""Mutation fuzzing of the whole pipeline on graphs that parse: every
fixture graph (test/fixtures/graphs) with 1-3 of its numbers replaced by
edge values (shapes, strides, dims, constants: 0, 1, -1, 2^31, ...) or an
op by another op the fixtures use, and one in three with its params.json
edited (numbers, NaN, dtypes and kinds, booleans, the file cut short), goes
through `kb-rewrite codegen` or `rewrite --verify off`. Exit codes 0, 1
and 2 are answers (docs/cli.md); anything else (a signal, 3 = internal
error) or a run past --timeout is a bug, kept as fuzz-out/mutants/bad-N.

    python3 fuzz/mutate_graphs.py --seconds 300 --seed 1 --mode rewrite

Deterministic per seed (the mutations; not the run count within a time
budget). Prints each failure and a summary line; exits 1 if any failed.
"""

import argparse
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EDGES = ["0", "1", "-1", "2", "3", "5", "7", "-2", "-3", "65536", "2147483648",
         "4294967297"]
NUMBER = re.compile(r"(?<![\w.])-?\d+(?![\w.])")
OP = re.compile(r"aten::\w+")
STRING_VALUE = re.compile(r'(?<=: )"[^"]*"')
STRINGS = ['"float16"', '"bfloat16"', '"int64"', '"bool"', '"cpu"', '""', '"x"',
           '"../../etc/passwd"', '"tensor"', '"scalar"', '"none"']


def mutate(text, rng, ops):
    """1-3 edits: mostly a number replaced by an edge value, sometimes an
    op by another the fixtures use (operands then fit its schema or not)."""
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.2:
            spots = list(OP.finditer(text))
            if spots:
                m = rng.choice(spots)
                text = text[:m.start()] + rng.choice(ops) + text[m.end():]
            continue
        spots = list(NUMBER.finditer(text))
        if not spots:
            break
        m = rng.choice(spots)
        text = text[:m.start()] + rng.choice(EDGES) + text[m.end():]
    return text


def mutate_params(text, rng):
    """1-2 edits of params.json: a number by an edge value, a string value
    by another (dtypes, kinds, a path), a boolean flipped, or the file cut
    short (malformed JSON)."""
    for _ in range(rng.randint(1, 2)):
        r = rng.random()
        if r < 0.5:
            spots = list(NUMBER.finditer(text))
            choices = EDGES + ["1e308", "-1e308", "0.5", "NaN", "Infinity"]
        elif r < 0.8:
            spots = list(STRING_VALUE.finditer(text))
            choices = STRINGS
        elif r < 0.95:
            spots = list(re.finditer(r"\b(true|false)\b", text))
            choices = ["true", "false", "null", "0"]
        else:
            return text[:rng.randrange(len(text) + 1)]
        if spots:
            m = rng.choice(spots)
            text = text[:m.start()] + rng.choice(choices) + text[m.end():]
    return text


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--mode", choices=["codegen", "rewrite"], default="codegen")
    p.add_argument("--timeout", type=float, default=30,
                   help="seconds a run may take before it counts as a hang")
    p.add_argument("--kb-rewrite", default=os.path.join(ROOT, "build", "bin", "kb-rewrite"))
    p.add_argument("--out", default=os.path.join(ROOT, "fuzz-out", "mutants"))
    args = p.parse_args()
    rng = random.Random(args.seed)
    graphs = sorted(glob.glob(os.path.join(ROOT, "test", "fixtures", "graphs", "*", "*.graph.txt")))
    ops = sorted({m.group(0) for g in graphs for m in OP.finditer(open(g).read())})
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="kb-mutants-")
    start, runs, bad = time.time(), 0, 0
    while time.time() - start < args.seconds:
        source = rng.choice(graphs)
        text = mutate(open(source).read(), rng, ops)
        graph = os.path.join(work, "m.graph.txt")
        with open(graph, "w") as f:
            f.write(text)
        params = source[:-len(".graph.txt")] + ".params.json"
        mine = os.path.join(work, "m.params.json")
        if os.path.exists(params):
            # One mutant in three also (or only) has its params.json edited.
            ptext = open(params).read()
            if rng.random() < 0.33:
                ptext = mutate_params(ptext, rng)
                if rng.random() < 0.5:
                    text = open(source).read()
                    with open(graph, "w") as f:
                        f.write(text)
            with open(mine, "w") as f:
                f.write(ptext)
        elif os.path.exists(mine):
            os.remove(mine)
        out = os.path.join(work, "out")
        shutil.rmtree(out, ignore_errors=True)
        cmd = [args.kb_rewrite, args.mode, graph, "-o", out]
        if args.mode == "rewrite":
            cmd += ["--verify", "off", "--quiet"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            rc, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired:
            rc, err = "timeout", ""
        runs += 1
        if rc not in (0, 1, 2):
            bad += 1
            keep = os.path.join(args.out, f"bad-{bad}.graph.txt")
            shutil.copy(graph, keep)
            if os.path.exists(mine):
                shutil.copy(mine, keep[:-len(".graph.txt")] + ".params.json")
            line = next((l for l in err.splitlines() if "kb::" in l or "error" in l), "")
            print(f"FAIL rc={rc} from {os.path.relpath(source, ROOT)} -> {keep}: {line[:200]}",
                  flush=True)
    shutil.rmtree(work, ignore_errors=True)
    print(f"{runs} mutants through {args.mode}, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
