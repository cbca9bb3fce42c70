#!/usr/bin/env python3
"""Mutation fuzzing of the C++ rewrite on libtorch sources: every C++ input
the tests and benches rewrite (test/Rewrite/cxx-*.cpp and Inputs/*.cpp,
bench/cxx, examples/libtorch-block) with 1-3 edits goes through
`kb-rewrite rewrite --verify off`. The edits: a number replaced by an edge
value (dims, window sizes, scalars, eps), a torch:: function or Tensor
method by another the inputs call, a statement line deleted or doubled,
an identifier by another of the file (new aliasing and reads). Exit codes
0, 1 and 2 are answers (docs/cli.md); anything else (a signal, 3 = internal
error) or a run past --timeout is a bug. With --check-output, a rewrite
that succeeded must also leave a source Clang still compiles (against the
written kb_kernels.h): a rewrite that breaks a source that compiled is a
bug too. Failures are kept as fuzz-out/cxx-mutants/bad-N.cpp.

    python3 fuzz/mutate_cxx.py --seconds 600 --seed 1 --jobs 2 --check-output

Clang parses torch/torch.h for every run (~9 s); a precompiled header made
once by clang++ of kb-rewrite's LLVM version (`--pch`, built when missing)
brings a run to ~4 s. Deterministic per seed (the mutations; not how many
run within the time budget).
"""

import argparse
import concurrent.futures as cf
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
TORCH_API = "/usr/include/torch/csrc/api/include"
EDGES = ["0", "1", "-1", "2", "3", "-2", "65536", "2147483648", "4294967297",
         "1e-30", "1e30", "0.0", "-0.0", "1e400"]
NUMBER = re.compile(r"(?<![\w.])-?\d+(\.\d*)?([eE][-+]?\d+)?(?![\w.])")
FUNCTION = re.compile(r"\btorch::(nn::functional::)?[a-z_0-9]+(?=\()")
METHOD = re.compile(r"\.(?!forward\b)[a-z_0-9]+_?(?=\()")
IDENT = re.compile(r"\b[a-z_][a-z_0-9]*\b")
KEYWORDS = {"auto", "return", "const", "int", "float", "double", "bool",
            "void", "struct", "class", "if", "else", "for", "while", "true",
            "false", "nullptr", "namespace", "using", "include", "torch",
            "nn", "at", "std", "register_module", "public", "private"}


def inputs():
    files = glob.glob(os.path.join(ROOT, "test", "Rewrite", "cxx-*.cpp"))
    files += glob.glob(os.path.join(ROOT, "test", "Rewrite", "Inputs", "*.cpp"))
    files += glob.glob(os.path.join(ROOT, "bench", "cxx", "*.cpp"))
    files += glob.glob(os.path.join(ROOT, "examples", "libtorch-block", "*.cpp"))
    return sorted(files)


def code_lines(text):
    """The source without its comment lines (the lit RUN/CHECK lines)."""
    return "\n".join(l for l in text.splitlines()
                     if not l.lstrip().startswith("//")) + "\n"


def replace_one(text, rng, pattern, choices):
    spots = list(pattern.finditer(text))
    if not spots or not choices:
        return text
    m = rng.choice(spots)
    return text[:m.start()] + rng.choice(choices) + text[m.end():]


def mutate(text, rng, functions, methods):
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.45:
            text = replace_one(text, rng, NUMBER, EDGES)
        elif r < 0.6:
            text = replace_one(text, rng, FUNCTION, functions)
        elif r < 0.72:
            text = replace_one(text, rng, METHOD, methods)
        elif r < 0.86:
            lines = text.splitlines()
            stmts = [i for i, l in enumerate(lines) if l.rstrip().endswith(";")]
            if stmts:
                i = rng.choice(stmts)
                if rng.random() < 0.5:
                    del lines[i]
                else:
                    lines.insert(i, lines[i])
                text = "\n".join(lines) + "\n"
        else:
            names = sorted({m.group(0) for m in IDENT.finditer(text)} - KEYWORDS)
            text = replace_one(text, rng, IDENT, names)
    return text


def llvm_major(kb_rewrite):
    out = subprocess.run([kb_rewrite, "--version"], capture_output=True,
                         text=True).stdout
    m = re.search(r"LLVM/MLIR (\d+)", out)
    return m.group(1) if m else None


def build_pch(kb_rewrite, pch):
    major = llvm_major(kb_rewrite)
    clang = shutil.which(f"clang++-{major}") if major else None
    if not clang:
        print(f"no clang++-{major}: parsing without a precompiled header")
        return None
    if not os.path.exists(pch):
        subprocess.run([clang, "-x", "c++-header", "-std=c++17", "-I" + TORCH_API,
                        os.path.join(TORCH_API, "torch", "torch.h"), "-o", pch],
                       check=True)
    return clang


def run_one(args, clang, pch, index, source, text):
    """One mutant; returns (source, failure, why, its text, exit code) with
    failure None when the run was an answer."""
    work = tempfile.mkdtemp(prefix="kb-cxx-mutant-")
    try:
        name = os.path.join(work, os.path.basename(source))
        with open(name, "w") as f:
            f.write(text)
        flags = ["-std=c++17", "-I" + TORCH_API, "-I" + os.path.dirname(source)]
        if pch:
            flags += ["-include-pch", pch]
        out = os.path.join(work, "out")
        cmd = [args.kb_rewrite, "rewrite", name, "-o", out, "--verify", "off"] + (["--fast-math"] if index % 3 == 2 else []) + ["--"] + flags
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            rc, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired:
            return source, "timeout", "", text, None
        if rc not in (0, 1, 2):
            line = next((l for l in err.splitlines() if "kb::" in l or "error" in l), "")
            return source, rc, line, text, rc
        written = os.path.join(out, os.path.basename(source))
        if rc == 0 and args.check_output and clang and os.path.exists(written):
            c = subprocess.run([clang, "-fsyntax-only", "-w"] + flags + ["-I" + out, written],
                               capture_output=True, text=True, timeout=args.timeout)
            if c.returncode != 0:
                line = next((l for l in c.stderr.splitlines() if "error" in l), "")
                return source, "output does not compile", line, text, rc
        return source, None, "", text, rc
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=60,
                   help="seconds a run may take before it counts as a hang")
    p.add_argument("--check-output", action="store_true",
                   help="a successful rewrite's source must still compile")
    p.add_argument("--kb-rewrite", default=os.path.join(ROOT, "build", "bin", "kb-rewrite"))
    p.add_argument("--pch", default=os.path.join(tempfile.gettempdir(), "kb-fuzz-torch.pch"))
    p.add_argument("--out", default=os.path.join(ROOT, "fuzz-out", "cxx-mutants"))
    args = p.parse_args()
    rng = random.Random(args.seed)
    files = inputs()
    texts = {f: code_lines(open(f).read()) for f in files}
    functions = sorted({m.group(0) for t in texts.values() for m in FUNCTION.finditer(t)})
    methods = sorted({m.group(0) for t in texts.values() for m in METHOD.finditer(t)})
    clang = build_pch(args.kb_rewrite, args.pch)
    pch = args.pch if clang else None
    os.makedirs(args.out, exist_ok=True)
    start, runs, bad, index, codes = time.time(), 0, 0, 0, {}
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        pending = set()
        while True:
            while len(pending) < args.jobs and time.time() - start < args.seconds:
                source = rng.choice(files)
                text = mutate(texts[source], rng, functions, methods)
                pending.add(pool.submit(run_one, args, clang, pch, index, source, text))
                index += 1
            if not pending:
                break
            done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                source, rc, why, text, code = fut.result()
                runs += 1
                codes[code] = codes.get(code, 0) + 1
                if rc is None:
                    continue
                bad += 1
                keep = os.path.join(args.out, f"bad-{bad}-{os.path.basename(source)}")
                with open(keep, "w") as f:
                    f.write(text)
                print(f"FAIL {rc} from {os.path.relpath(source, ROOT)} -> {keep}: {why[:200]}",
                      flush=True)
    print(f"{runs} C++ mutants through rewrite, {bad} failed; exit codes "
          + ", ".join(f"{k}: {v}" for k, v in sorted(codes.items(), key=str)))
    # Every mutant refused means the harness, not the rewrite, is broken.
    return 1 if bad or not codes.get(0) else 0


if __name__ == "__main__":
    sys.exit(main())
