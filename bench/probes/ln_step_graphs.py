"""Graphs for the ATen-order layer norm and softmax probes: LayerNorm(C)
over randn(R, C) (after `x + r` when asked), then `(y > 0.5).float() * y`,
the step op that makes rewrite's numerics policy want ATen's bits
(docs/correctness.md); with --op softmax or log_softmax, that op over the
last dim instead (then `(y > 0.01)` or `(y > -3)`), written DIR/softmax_C.*.

    python3 bench/probes/ln_step_graphs.py -o DIR 7x200000 33x65536+ 257x16384+
    python3 bench/probes/ln_step_graphs.py --op softmax -o DIR 7x200000 100x65536+

Each spec is CxR, a trailing + for the residual add. Writes DIR/ln_C.py and
exports it with tools/kb-export/kb-export (--device meta) to
DIR/ln_C.graph.txt and .params.json, for bench/probes/codegen_knobs.py:

    python3 bench/probes/codegen_knobs.py --kb-rewrite B --kb-verify V \\
        --variants "base:;aten:--aten-order-norms" --plan layer_norm DIR/*.graph.txt
"""
import argparse
import os
import subprocess
import sys

MODEL = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = nn.LayerNorm({c})

    def forward(self, x, r):
        y = self.n({arg})
        return (y > 0.5).float() * y


def get_inputs():
    return [torch.randn({r}, {c}), torch.randn({r}, {c})]


def get_init_inputs():
    return []
"""

SOFTMAX = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, r):
        y = torch.{op}(({arg}) * 2.0, dim=-1)
        return (y > {t}).float() * y


def get_inputs():
    return [torch.randn({r}, {c}), torch.randn({r}, {c})]


def get_init_inputs():
    return []
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("specs", nargs="+", help="CxR, + for a residual add")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--op", choices=["layer_norm", "softmax", "log_softmax"],
                    default="layer_norm")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    export = os.path.join(root, "tools", "kb-export", "kb-export")
    os.makedirs(args.out, exist_ok=True)
    for spec in args.specs:
        add = spec.endswith("+")
        c, r = (int(v) for v in spec.rstrip("+").split("x"))
        stem = "ln" if args.op == "layer_norm" else args.op
        path = os.path.join(args.out, f"{stem}_{c}.py")
        arg = "x + r" if add else "x"
        with open(path, "w") as f:
            if args.op == "layer_norm":
                f.write(MODEL.format(c=c, r=r, arg=arg))
            else:
                f.write(SOFTMAX.format(c=c, r=r, arg=arg, op=args.op,
                                       t="0.01" if args.op == "softmax" else "-3.0"))
        res = subprocess.run([export, path, "-o", args.out, "--device", "meta",
                              "--python", sys.executable],
                             capture_output=True, text=True)
        if res.returncode:
            sys.stderr.write(f"{spec}: kb-export failed:\n{res.stderr[-2000:]}")
            return 1
        print(f"{spec}: {os.path.join(args.out, f'{stem}_{c}.graph.txt')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
