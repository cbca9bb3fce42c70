"""Prints the lines a rewrite removed (-) and added (+), then whether every
added line is the kb_kernels.h include or a fused call and at most the
chain's own lines were removed (lit: cxx-rewrite-public-style.test)."""
import difflib
import sys

before = open(sys.argv[1]).read().splitlines()
after = open(sys.argv[2]).read().splitlines()
added, removed = [], []
for line in difflib.ndiff(before, after):
    if line.startswith("+ "):
        added.append(line[2:])
    elif line.startswith("- "):
        removed.append(line[2:])
for line in removed:
    print("-", line)
for line in added:
    print("+", line)
ok = all("kb_rewrite::" in l or "kb_kernels.h" in l for l in added) and \
    len(removed) <= sum("kb_rewrite::" in l for l in added)
print("only chain lines changed" if ok else "OTHER CHANGES")
