#!/usr/bin/env python3
"""Generates KernelBench-format tasks that kb-rewrite was never tuned on.

    python3 bench/gen_tasks.py --count 150 --seed 20261201 -o DIR [--json]

Each task is DIR/<index>_<summary>.py with `class Model(nn.Module)`,
`get_inputs()` and `get_init_inputs()`, as KernelBench writes them, and
DIR/manifest.json describes them all (category, anchor, ops, bytes moved,
shape classes). The same seed and count write byte-identical files.

The distribution is fixed by issue 21 (docs/correctness.md, bench/NOTES.md):
  * a third of the tasks are single ops (no anchor, one op), two thirds
    chains: an anchor drawn from Linear, matmul, bmm, Conv1d/2d/3d,
    ConvTranspose2d/3d, depthwise and grouped Conv2d, or none (25%), then
    1-6 ops (2-6 without an anchor);
  * ops from all of: every pointwise row of the op table
    (include/kb/IR/OpSemantics.def; tests check that none is missing) with
    scalar, per-channel and full-tensor operands; batch/group/instance/layer
    norm in training mode; softmax/log_softmax over any dim; sum, mean, amax,
    amin, logsumexp, var, std, argmax, max/min with indices and vector norms
    over leading, middle and trailing dims, with and without keepdim;
    max/avg pooling 1d/2d/3d and adaptive pooling; residual adds of earlier
    values; values used twice; dropout; the level-1 losses;
  * shapes random but realistic: each task moves 0.25-4 GB in eager fp32
    (every op reads its inputs and writes its output once), odd sizes, few
    and many channels, short and long rows.

Values stay finite: ops with a restricted domain get the guard real code
uses (log(|x| + eps), sqrt(|x|), ...), and the explosive ones (exp, expm1,
square, pow) never follow each other. Task 0 mod 3 is a single op, so any
prefix of the tasks is stratified. Needs only Python (torch is not
imported); prints a histogram of ops and shape classes.
"""

import argparse
import json
import math
import os
import random
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GB = 1e9
MIN_BYTES, MAX_BYTES = 0.25 * GB, 4 * GB


# ---- the op table -------------------------------------------------------------------

def op_table_pointwise(path=None):
    """(name, overload) of every Elementwise row without a style: the
    pointwise ops the generator must cover."""
    path = path or os.path.join(ROOT, "include", "kb", "IR", "OpSemantics.def")
    with open(path) as f:
        text = f.read()
    rows = re.findall(r"KB_OP\((\w+),\s*\"(\w*)\",\s*Elementwise,\s*None,", text)
    return sorted(set(rows))


# Pointwise generators: (table row) -> function(g, x) returning an expression.
# `g` is the Task being built (it owns parameters, inputs and the rng).
def _s(g, lo, hi, digits=3):
    return round(g.rng.uniform(lo, hi), digits)


POINTWISE = {
    ("relu", ""): lambda g, x: f"torch.relu({x})",
    ("relu6", ""): lambda g, x: f"F.relu6({x})",
    ("leaky_relu", ""): lambda g, x: f"F.leaky_relu({x}, {_s(g, 0.01, 0.3)})",
    ("gelu", ""): lambda g, x: (f"F.gelu({x}, approximate='tanh')" if g.rng.random() < 0.3
                                else f"F.gelu({x})"),
    ("sigmoid", ""): lambda g, x: f"torch.sigmoid({x})",
    ("tanh", ""): lambda g, x: f"torch.tanh({x})",
    ("mish", ""): lambda g, x: f"F.mish({x})",
    ("softplus", ""): lambda g, x: f"F.softplus({x}, beta={g.rng.choice([1, 2])}, "
                                   f"threshold={g.rng.choice([10, 20])})",
    ("silu", ""): lambda g, x: f"F.silu({x})",
    ("hardtanh", ""): lambda g, x: f"F.hardtanh({x}, {-_s(g, 0.5, 2)}, {_s(g, 0.5, 2)})",
    ("hardsigmoid", ""): lambda g, x: f"F.hardsigmoid({x})",
    ("hardswish", ""): lambda g, x: f"F.hardswish({x})",
    ("elu", ""): lambda g, x: f"F.elu({x}, alpha={_s(g, 0.5, 1.5)})",
    ("selu", ""): lambda g, x: f"torch.selu({x})",
    ("clamp", ""): lambda g, x: f"torch.clamp({x}, {-_s(g, 0.1, 1)}, {_s(g, 0.1, 1)})",
    ("clamp", "Tensor"): lambda g, x: (f"torch.clamp({x}, {g.param('channel', -0.5, 0)}, "
                                       f"{g.param('channel', 0, 0.5)})"),
    ("clamp_min", ""): lambda g, x: f"torch.clamp_min({x}, {-_s(g, 0, 0.5)})",
    ("clamp_max", ""): lambda g, x: f"torch.clamp_max({x}, {_s(g, 0, 0.5)})",
    ("exp", ""): lambda g, x: f"torch.exp({x})",
    ("log", ""): lambda g, x: f"torch.log({x}.abs() + {g.rng.choice(['1e-3', '1e-2', '1.0'])})",
    ("log1p", ""): lambda g, x: f"torch.log1p({x}.abs())",
    ("expm1", ""): lambda g, x: f"torch.expm1({x})",
    ("sqrt", ""): lambda g, x: f"torch.sqrt({x}.abs())",
    ("rsqrt", ""): lambda g, x: f"torch.rsqrt({x}.abs() + {g.rng.choice(['1e-2', '1.0'])})",
    ("abs", ""): lambda g, x: f"torch.abs({x})",
    ("neg", ""): lambda g, x: f"torch.neg({x})",
    ("reciprocal", ""): lambda g, x: f"torch.reciprocal({x}.abs() + 1.0)",
    ("erf", ""): lambda g, x: f"torch.erf({x})",
    ("log_sigmoid", ""): lambda g, x: f"F.logsigmoid({x})",
    ("sin", ""): lambda g, x: f"torch.sin({x})",
    ("cos", ""): lambda g, x: f"torch.cos({x})",
    ("square", ""): lambda g, x: f"torch.square({x})",
    ("pow", "Tensor_Scalar"): lambda g, x: g.rng.choice(
        [f"torch.pow({x}, 2)", f"torch.pow({x}, 3)", f"torch.pow({x}.abs(), 0.5)",
         f"torch.pow({x}.abs(), 1.5)"]),
    ("pow", "Tensor_Tensor"): lambda g, x: f"torch.pow({x}.abs() + 0.5, {g.param('channel', 0.5, 2)})",
    ("add", "Tensor"): lambda g, x: f"{x} + {g.operand()}",
    ("add", "Scalar"): lambda g, x: f"{x} + {_s(g, -2, 2)}",
    ("sub", "Tensor"): lambda g, x: f"{x} - {g.operand()}",
    ("sub", "Scalar"): lambda g, x: f"{x} - {_s(g, -2, 2)}",
    ("rsub", "Tensor"): lambda g, x: f"torch.rsub({x}, {g.operand()})",
    ("rsub", "Scalar"): lambda g, x: f"{_s(g, 0.5, 2)} - {x}",
    ("mul", "Tensor"): lambda g, x: f"{x} * {g.operand()}",
    ("mul", "Scalar"): lambda g, x: f"{x} * {_s(g, 0.1, 3)}",
    ("div", "Tensor"): lambda g, x: f"{x} / ({g.operand()}.abs() + 1.0)",
    ("div", "Scalar"): lambda g, x: f"{x} / {_s(g, 0.5, 4)}",
    ("div", "Tensor_mode"): lambda g, x: (f"torch.div({x}, {g.operand()}.abs() + 1.0, "
                                          f"rounding_mode='{g.rng.choice(['trunc', 'floor'])}')"),
    ("maximum", ""): lambda g, x: f"torch.maximum({x}, {g.operand()})",
    ("minimum", ""): lambda g, x: f"torch.minimum({x}, {g.operand()})",
    ("max", "other"): lambda g, x: f"torch.max({x}, {g.operand()})",
    ("min", "other"): lambda g, x: f"torch.min({x}, {g.operand()})",
    ("floor_divide", ""): lambda g, x: f"torch.floor_divide({x}, {g.operand()}.abs() + 1.0)",
    ("floor_divide", "Scalar"): lambda g, x: f"torch.floor_divide({x}, {_s(g, 0.25, 2)})",
    ("remainder", "Tensor"): lambda g, x: f"torch.remainder({x}, {g.operand()}.abs() + 1.0)",
    ("remainder", "Scalar"): lambda g, x: f"torch.remainder({x}, {_s(g, 0.5, 2)})",
    ("eq", "Tensor"): lambda g, x: f"torch.where({x}.clamp(-1, 1) == {g.operand()}.clamp(-1, 1), 0.0, {x})",
    ("eq", "Scalar"): lambda g, x: f"torch.where({x}.clamp(0, 1) == 1, 1.0, {x})",
    ("ne", "Tensor"): lambda g, x: f"torch.where({x}.clamp(0, 1) != {g.operand()}.clamp(0, 1), {x}, 0.0)",
    ("ne", "Scalar"): lambda g, x: f"torch.where({x}.clamp(0, 1) != 0, {x}, 0.5)",
    ("gt", "Tensor"): lambda g, x: f"torch.where({x} > {g.operand()}, {x}, {x} * {_s(g, 0.1, 0.5)})",
    ("gt", "Scalar"): lambda g, x: f"torch.where({x} > {_s(g, -0.5, 0.5)}, {x}, {x} * {_s(g, 0.1, 0.5)})",
    ("lt", "Tensor"): lambda g, x: f"torch.where({x} < {g.operand()}, {x}, -{x})",
    ("lt", "Scalar"): lambda g, x: f"torch.where({x} < {_s(g, -0.5, 0.5)}, {x}, 0.0)",
    ("ge", "Tensor"): lambda g, x: f"({x} >= {g.operand()}).float() * {x}",
    ("ge", "Scalar"): lambda g, x: f"({x} >= {_s(g, -0.5, 0.5)}).float() * {x}",
    ("le", "Tensor"): lambda g, x: f"({x} <= {g.operand()}).float() + {x}",
    ("le", "Scalar"): lambda g, x: f"({x} <= {_s(g, -0.5, 0.5)}).float() + {x}",
    ("masked_fill", "Scalar"): lambda g, x: f"{x}.masked_fill({x} < {_s(g, -0.5, 0.5)}, {_s(g, -1, 1)})",
    ("logical_not", ""): lambda g, x: f"torch.where(torch.logical_not({x} > 0), {x} * 0.5, {x})",
    ("xlogy", "Tensor"): lambda g, x: f"torch.xlogy({x}, {g.operand()}.abs() + 0.5)",
    ("where", "self"): lambda g, x: f"torch.where({g.operand()} > 0, {x}, {g.operand()})",
    # timm's Affine (ResMLP) is addcmul(beta, alpha, x): value 1 is one fma
    # on torch >= 2.11, other values the rounded product then an fma.
    ("addcmul", ""): lambda g, x: (
        f"torch.addcmul({g.operand()}, {g.operand()}, {x}"
        + g.rng.choice(["", f", value={_s(g, 0.1, 2)}"]) + ")"),
    ("addcdiv", ""): lambda g, x: (
        f"torch.addcdiv({x}, {g.operand()}, {g.operand()}.abs() + 1.0, value={_s(g, -2, 2)})"),
}
# Rows that no current torch traces to (older signatures of a covered op).
OLD_SIGNATURES = {("gelu", "legacy")}
# Rows that other rows' forms trace to (torch.where(x < c, x, 0.0) is
# where.ScalarOther; torch.where(m, 0.0, x) where.ScalarSelf), and where.Scalar
# (both sides numbers), and div.Scalar_mode (a rounding division by a number:
# the kernel's form of div.Tensor_mode by a constant), which no form draws:
# adding rows to POINTWISE would change every task of a seed.
INDIRECT = {("where", "ScalarOther"), ("where", "ScalarSelf"), ("where", "Scalar"),
            ("div", "Scalar_mode")}
EXPLOSIVE = {("exp", ""), ("expm1", ""), ("square", ""), ("pow", "Tensor_Scalar"),
             ("pow", "Tensor_Tensor")}


# ---- shapes --------------------------------------------------------------------------

def numel(shape):
    return math.prod(shape)


def reduction_class(shape, dims):
    """leading / middle / trailing, row length and row count classes."""
    dims = sorted(d % len(shape) for d in dims)
    r = len(shape)
    if dims[-1] == r - 1 and dims == list(range(dims[0], r)):
        where = "trailing"
    elif dims[0] == 0 and dims == list(range(0, dims[-1] + 1)):
        where = "leading"
    else:
        where = "middle"
    length = numel([shape[d] for d in dims])
    rows = numel(shape) // max(length, 1)
    return {"dim": where,
            "row": "short" if length < 256 else ("long" if length >= 16384 else "medium"),
            "rows": "few" if rows < 1024 else ("many" if rows >= 262144 else "some")}


class Task:
    """One task under construction: forward lines, parameters, inputs."""

    def __init__(self, rng, batch):
        self.rng = rng
        self.batch = batch
        self.init_lines = []   # lines of __init__
        self.lines = []        # lines of forward
        self.inputs = []       # (name, shape, kind)
        self.values = []       # (name, shape) of earlier values, for residuals
        self.ops = []          # op names, in order, for the manifest
        self.classes = []      # shape classes of reductions/norms/pools
        self.bytes = 0
        self.params = 0
        self.shape = None
        self.x = "x"
        self.counter = 0
        self.last = None
        self.terminal = False
        self.ill_posed = False

    def fresh(self, stem):
        self.counter += 1
        return f"{stem}{self.counter}"

    # Operands of binary pointwise ops: scalar-like per-channel parameters,
    # full tensors (a second input or an earlier value of the same shape).
    def param(self, kind, lo=-1.0, hi=1.0):
        name = self.fresh("p")
        shape = self.channel_shape() if kind == "channel" else list(self.shape)
        self.init_lines.append(
            f"self.{name} = nn.Parameter(torch.empty({tuple(shape)}).uniform_({lo}, {hi}))")
        self.params += numel(shape)
        self.bytes += 4 * numel(shape)
        return f"self.{name}"

    def channel_shape(self):
        if len(self.shape) <= 1:
            return [self.shape[0]] if self.shape else [1]
        if len(self.shape) == 2:
            return [self.shape[1]]
        return [self.shape[1]] + [1] * (len(self.shape) - 2)

    def operand(self):
        roll = self.rng.random()
        if roll < 0.45:
            return self.param("channel")
        same = [n for n, s in self.values if s == self.shape and n != self.x]
        if roll < 0.7 and same:
            self.bytes += 4 * numel(self.shape)
            return self.rng.choice(same)
        if roll < 0.85:
            name = self.fresh("y")
            self.inputs.append((name, list(self.shape), "randn"))
            self.bytes += 4 * numel(self.shape)
            return name
        return self.param("full") if numel(self.shape) <= 64 << 20 else self.param("channel")

    def emit(self, op, expr, out_shape, reads=1, cls=None):
        name = self.fresh("v")
        self.lines.append(f"{name} = {expr}")
        self.bytes += 4 * (reads * numel(self.shape) + numel(out_shape))
        self.ops.append(op)
        if cls:
            self.classes.append(dict(cls, op=op))
        self.shape = list(out_shape)
        self.x = name
        self.values.append((name, list(out_shape)))


# ---- anchors ------------------------------------------------------------------------

ANCHORS = ["linear", "matmul", "bmm", "conv1d", "conv2d", "conv3d", "conv_transpose2d",
           "conv_transpose3d", "depthwise_conv2d", "grouped_conv2d"]


def odd(rng, values):
    """A size from `values`, sometimes made odd (an off-by-one of real models)."""
    v = rng.choice(values)
    return v + rng.choice([-1, 1]) if rng.random() < 0.3 and v > 4 else v


def channels(rng):
    return rng.choice([3, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 512])


def start_anchor(t, anchor):
    rng, B = t.rng, t.batch
    if anchor == "linear":
        k, n = odd(rng, [256, 512, 1024, 2048, 4096]), odd(rng, [128, 512, 1024, 2048, 4096, 8192])
        shape = [B, k] if rng.random() < 0.7 else [max(1, B // 64), 64, k]
        t.inputs.append(("x", shape, "randn"))
        t.init_lines.append(f"self.anchor = nn.Linear({k}, {n})")
        t.shape = shape
        t.emit("linear", "self.anchor(x)", shape[:-1] + [n])
        t.bytes += 4 * k * n
        return
    if anchor in ("matmul", "bmm"):
        m, k, n = odd(rng, [64, 128, 256, 512]), odd(rng, [64, 128, 256, 512]), odd(rng, [64, 128, 256, 512, 1024])
        if anchor == "matmul" and rng.random() < 0.5:
            a, b = [B * 4, k], [k, n]
        else:
            a, b = [B, m, k], [B, k, n]
        t.inputs += [("x", a, "randn"), ("w", b, "randn")]
        t.shape = a
        t.bytes += 4 * numel(b)
        fn = "torch.bmm" if anchor == "bmm" and len(a) == 3 else "torch.matmul"
        t.emit(anchor, f"{fn}(x, w)", a[:-1] + [b[-1]])
        return
    dims = {"conv1d": 1, "conv3d": 3, "conv_transpose3d": 3}.get(anchor, 2)
    cin = channels(rng)
    cout = channels(rng)
    spatial = {1: [256, 1024, 4096, 16384], 2: [16, 32, 56, 64, 112, 128, 224],
               3: [8, 16, 24, 32]}[dims]
    size = [odd(rng, spatial) for _ in range(dims)]
    k = rng.choice([1, 3, 3, 5]) if dims < 3 else rng.choice([1, 3])
    groups = 1
    if anchor == "depthwise_conv2d":
        cin = rng.choice([16, 32, 64, 128, 256])
        cout, groups, k = cin * rng.choice([1, 2]), cin, rng.choice([3, 5])
    elif anchor == "grouped_conv2d":
        groups = rng.choice([2, 4, 8])
        cin, cout = groups * rng.choice([4, 8, 16, 32]), groups * rng.choice([4, 8, 16, 32])
    stride = 1 if rng.random() < 0.7 or k == 1 else 2
    pad = k // 2 if rng.random() < 0.6 else 0
    shape = [B, cin] + size
    t.inputs.append(("x", shape, "randn"))
    t.shape = shape
    if anchor.startswith("conv_transpose"):
        stride = rng.choice([1, 2])
        opad = 1 if stride == 2 and rng.random() < 0.5 else 0
        out = [(s - 1) * stride - 2 * pad + k + opad for s in size]
        cls = "nn.ConvTranspose2d" if dims == 2 else "nn.ConvTranspose3d"
        t.init_lines.append(f"self.anchor = {cls}({cin}, {cout}, {k}, stride={stride}, "
                            f"padding={pad}, output_padding={opad})")
    else:
        out = [(s + 2 * pad - k) // stride + 1 for s in size]
        cls = {1: "nn.Conv1d", 2: "nn.Conv2d", 3: "nn.Conv3d"}[dims]
        t.init_lines.append(f"self.anchor = {cls}({cin}, {cout}, {k}, stride={stride}, "
                            f"padding={pad}, groups={groups})")
    t.bytes += 4 * cout * (cin // groups) * k ** dims
    t.emit(anchor, "self.anchor(x)", [B, cout] + out)


def start_plain(t):
    """No anchor: one input of rank 2-5."""
    rng, B = t.rng, t.batch
    rank = rng.choice([2, 2, 3, 4, 4, 5])
    if rank == 2:
        shape = [B, odd(rng, [7, 64, 256, 1000, 4096, 16384, 65536])]
    elif rank == 3:
        shape = [B, odd(rng, [16, 64, 128, 512]), odd(rng, [32, 256, 1024, 4096])]
    elif rank == 4:
        shape = [B, channels(rng), odd(rng, [14, 28, 56, 64, 128, 256]), odd(rng, [14, 28, 56, 64, 128, 256])]
    else:
        shape = [B, channels(rng), odd(rng, [8, 16, 32]), odd(rng, [16, 32, 64]), odd(rng, [16, 32, 64])]
    t.inputs.append(("x", shape, "randn"))
    t.shape = shape


# ---- op families ---------------------------------------------------------------------

def op_pointwise(t):
    rows = [r for r in POINTWISE if not (r in EXPLOSIVE and t.last in EXPLOSIVE)]
    row = t.rng.choice(rows)
    expr = POINTWISE[row](t, t.x)  # operand() counts the operands' bytes
    t.emit(row[0] + (f".{row[1]}" if row[1] else ""), expr, t.shape)
    t.last = row


def op_norm(t):
    rng, shape = t.rng, t.shape
    r, C = len(shape), shape[1] if len(shape) > 1 else 1
    # Each norm needs more than one value per statistic (ATen raises
    # otherwise in training mode, and one value normalises to zero).
    choices = ["layer_norm"] if shape[-1] > 1 else []
    if r in (2, 3, 4, 5) and numel(shape) // C > 1:
        choices.append("batch_norm")
    if r >= 3 and numel(shape[2:]) > 1:
        choices += ["group_norm", "instance_norm"]
    if not choices:
        return op_pointwise(t)
    kind = rng.choice(choices)
    name = t.fresh("n")
    if kind == "batch_norm":
        cls = {2: "nn.BatchNorm1d", 3: "nn.BatchNorm1d", 4: "nn.BatchNorm2d", 5: "nn.BatchNorm3d"}[r]
        t.init_lines.append(f"self.{name} = {cls}({C}, momentum={rng.choice([0.1, 0.01, 0.3])})")
        dims = [0] + list(range(2, r))
    elif kind == "group_norm":
        groups = [g for g in (1, 2, 4, 8, 16, 32) if C % g == 0]
        g = rng.choice(groups)
        t.init_lines.append(f"self.{name} = nn.GroupNorm({g}, {C}, affine={rng.random() < 0.7})")
        dims = list(range(1, r))
    elif kind == "instance_norm":
        cls = {3: "nn.InstanceNorm1d", 4: "nn.InstanceNorm2d", 5: "nn.InstanceNorm3d"}[r]
        t.init_lines.append(f"self.{name} = {cls}({C}, affine={rng.random() < 0.5})")
        dims = list(range(2, r))
    else:
        k = 1 if r == 2 or rng.random() < 0.7 else 2
        t.init_lines.append(f"self.{name} = nn.LayerNorm({tuple(shape[-k:])}, "
                            f"elementwise_affine={rng.random() < 0.8})")
        dims = list(range(r - k, r))
    t.emit(kind, f"self.{name}({t.x})", shape, 2, reduction_class(shape, dims))


def pick_dims(t, allow_multi=True):
    r = len(t.shape)
    where = t.rng.choice(["leading", "middle", "trailing"] if r >= 3 else ["leading", "trailing"])
    if where == "trailing":
        k = 2 if allow_multi and r >= 3 and t.rng.random() < 0.3 else 1
        return list(range(r - k, r))
    if where == "leading":
        return [0, 1] if allow_multi and r >= 4 and t.rng.random() < 0.3 else [0]
    return [t.rng.randrange(1, r - 1)]


def reduced(shape, dims, keepdim):
    return [1 if i in dims else s for i, s in enumerate(shape)] if keepdim else \
        [s for i, s in enumerate(shape) if i not in dims]


def op_softmax(t):
    d = pick_dims(t, allow_multi=False)[0]
    fn = t.rng.choice(["softmax", "log_softmax"])
    t.emit(fn, f"torch.{fn}({t.x}, dim={d})", t.shape, 1, reduction_class(t.shape, [d]))


def op_reduction(t):
    rng = t.rng
    fn = rng.choice(["sum", "mean", "amax", "amin", "logsumexp", "var", "std", "argmax",
                     "max.dim", "min.dim", "vector_norm"])
    multi = fn in ("sum", "mean", "amax", "amin", "logsumexp", "var", "std", "vector_norm")
    dims = pick_dims(t, allow_multi=multi)
    keep = rng.random() < 0.5
    if len(t.shape) - len(dims) < 1:
        keep = True
    arg = dims if len(dims) > 1 else dims[0]
    x = t.x
    if fn in ("var", "std"):
        expr = f"torch.{fn}({x}, dim={arg}, unbiased={rng.random() < 0.7}, keepdim={keep})"
    elif fn == "argmax":
        expr = f"torch.argmax({x}, dim={arg}, keepdim={keep})"
    elif fn in ("max.dim", "min.dim"):
        expr = f"torch.{fn[:3]}({x}, dim={arg}, keepdim={keep}).values"
    elif fn == "vector_norm":
        expr = f"torch.linalg.vector_norm({x}, ord={rng.choice([1, 2])}, dim={arg}, keepdim={keep})"
    else:
        expr = f"torch.{fn}({x}, dim={arg}, keepdim={keep})"
    cls = reduction_class(t.shape, dims)
    t.emit(fn, expr, reduced(t.shape, dims, keep), 1, cls)
    if fn == "argmax":
        t.terminal = True  # int64 indices end the chain


def pool_class(window, out):
    return {"dim": "pool", "row": "short" if window < 256 else "long",
            "rows": "few" if numel(out) < 1024 else ("many" if numel(out) >= 262144 else "some")}


def op_pool(t):
    rng, shape = t.rng, t.shape
    r = len(shape)
    spatial = shape[2:]
    if r not in (3, 4, 5) or min(spatial) < 2:
        return op_pointwise(t)
    nd = r - 2
    kind = rng.choice(["max", "avg", "adaptive_avg", "adaptive_max"] if nd == 2 else
                      ["max", "avg", "adaptive_avg"])
    if kind.startswith("adaptive"):
        size = [rng.choice([1, 1, 2, 4, 7]) for _ in spatial]
        size = [min(s, d) for s, d in zip(size, spatial)]
        arg = size[0] if len(set(size)) == 1 else tuple(size)
        fn = f"F.adaptive_{kind[9:]}_pool{nd}d"
        out = shape[:2] + size
        t.emit(f"adaptive_{kind[9:]}_pool{nd}d", f"{fn}({t.x}, {arg})", out, 1,
               pool_class(numel(spatial) // max(numel(size), 1), out))
        return
    k = rng.choice([2, 2, 3]) if min(spatial) >= 3 else 2
    stride = k if rng.random() < 0.7 else max(1, k - 1)
    pad = 1 if k == 3 and rng.random() < 0.3 else 0
    out = [(s + 2 * pad - k) // stride + 1 for s in spatial]
    if min(out) < 1:
        return op_pointwise(t)
    fn = f"F.{kind}_pool{nd}d"
    t.emit(f"{kind}_pool{nd}d", f"{fn}({t.x}, {k}, stride={stride}, padding={pad})",
           shape[:2] + out, 1, pool_class(k ** nd, shape[:2] + out))


def op_residual(t):
    same = [n for n, s in t.values[:-1] if s == t.shape]
    if not same:
        return op_twice(t)
    other = t.rng.choice(same)
    t.emit("residual_add", f"{t.x} + {other}", t.shape, 2)


def op_twice(t):
    """A value used twice in one expression."""
    x, rng = t.x, t.rng
    r = len(t.shape)
    d = rng.randrange(r) if r > 1 else 0
    form = rng.choice(["swish", "center", "normalize", "gate"])
    if form == "swish":
        t.emit("mul_sigmoid", f"{x} * torch.sigmoid({x})", t.shape, 1)
    elif form == "gate":
        t.emit("mul_tanh", f"{x} * torch.tanh(F.softplus({x}))", t.shape, 1)
    elif form == "center":
        t.emit("sub_mean", f"{x} - {x}.mean(dim={d}, keepdim=True)", t.shape, 2,
               reduction_class(t.shape, [d]))
    else:
        t.emit("div_norm", f"{x} / ({x}.norm(dim={d}, keepdim=True) + 1e-6)", t.shape, 2,
               reduction_class(t.shape, [d]))


def op_dropout(t):
    p = t.rng.choice([0.0, 0.0, 0.1, 0.2])
    name = t.fresh("d")
    t.init_lines.append(f"self.{name} = nn.Dropout({p})")
    t.emit("dropout", f"self.{name}({t.x})", t.shape, 1)
    if p > 0:
        t.ill_posed = True  # a random mask: eager differs from itself


LOSSES = ["mse", "l1", "smooth_l1", "huber", "kl_div", "cross_entropy", "hinge",
          "cosine", "triplet", "bce_logits"]


def op_loss(t, kind=None):
    """The level-1 losses, against a target input; ends the chain."""
    rng = t.rng
    kind = kind or rng.choice(LOSSES)
    x, shape = t.x, t.shape
    if kind == "cross_entropy":
        if len(shape) != 2:
            x = f"{x}.flatten(1)"
            shape = [shape[0], numel(shape[1:])]
        t.inputs.append(("target", [shape[0]], f"randint:{shape[1]}"))
        expr = f"F.cross_entropy({x}, target)"
    elif kind in ("cosine", "triplet") and len(shape) >= 2:
        if kind == "cosine":
            t.inputs.append(("target", list(shape), "randn"))
            expr = f"torch.mean(1 - F.cosine_similarity({x}, target, dim=1))"
        else:
            t.inputs += [("positive", list(shape), "randn"), ("negative", list(shape), "randn")]
            expr = f"F.triplet_margin_loss({x}, positive, negative, margin={_s(t, 0.5, 2)})"
    elif kind == "kl_div":
        d = len(shape) - 1
        t.inputs.append(("target", list(shape), f"softmax:{d}"))
        expr = f"F.kl_div(torch.log_softmax({x}, dim={d}), target, reduction='batchmean')"
    elif kind == "hinge":
        t.inputs.append(("target", list(shape), "sign"))
        expr = f"torch.mean(torch.clamp(1 - {x} * target, min=0))"
    elif kind == "bce_logits":
        t.inputs.append(("target", list(shape), "rand"))
        expr = f"F.binary_cross_entropy_with_logits({x}, target)"
    else:
        t.inputs.append(("target", list(shape), "randn"))
        fn = {"mse": "F.mse_loss", "l1": "F.l1_loss", "smooth_l1": "F.smooth_l1_loss",
              "huber": "F.huber_loss"}.get(kind, "F.mse_loss")
        expr = f"{fn}({x}, target)"
    t.bytes += 4 * numel(shape)  # the target
    t.emit(f"loss.{kind}", expr, [], 1, {"dim": "all", "row": "long", "rows": "few"})
    t.terminal = True


CHAIN_WEIGHTS = [(op_pointwise, 50), (op_norm, 12), (op_softmax, 6), (op_reduction, 10),
                 (op_pool, 8), (op_residual, 6), (op_twice, 6), (op_dropout, 1), (op_loss, 1)]
SINGLE_WEIGHTS = [(op_pointwise, 25), (op_norm, 20), (op_softmax, 10), (op_reduction, 25),
                  (op_pool, 10), (op_loss, 10)]


def weighted(rng, table):
    total = sum(w for _, w in table)
    x = rng.uniform(0, total)
    for fn, w in table:
        x -= w
        if x <= 0:
            return fn
    return table[-1][0]


# ---- one task --------------------------------------------------------------------------

BATCH = {"linear": [256, 1024, 4096, 16384], "matmul": [8, 32, 128, 512],
         "bmm": [8, 32, 128, 512], "conv1d": [8, 16, 32, 64], "conv3d": [2, 4, 8, 16],
         "conv_transpose3d": [2, 4, 8, 16], None: [4, 16, 64, 256, 1024]}


def build(seed, index, attempt, batch_scale):
    """One draw of task `index`; None when it misses the byte budget."""
    rng = random.Random(f"kb-gen:{seed}:{index}:{attempt}")
    single = index % 3 == 0
    anchor = None
    if not single and rng.random() >= 0.25:
        anchor = rng.choice(ANCHORS)
    batch = rng.choice(BATCH.get(anchor, [4, 8, 16, 32, 64]))
    batch = max(1, int(round(batch * batch_scale)))
    t = Task(rng, batch)
    # Everything after this point draws from a second stream, so that the
    # same draw with another batch size makes the same choices.
    t.rng = random.Random(f"kb-gen:{seed}:{index}:{attempt}:ops")
    if anchor:
        start_anchor(t, anchor)
    else:
        start_plain(t)
        t.values.append(("x", list(t.shape)))
    if single:
        weighted(t.rng, SINGLE_WEIGHTS)(t)
    else:
        n = t.rng.randint(1 if anchor else 2, 6)
        for _ in range(n):
            if t.terminal or not t.shape:
                break
            weighted(t.rng, CHAIN_WEIGHTS)(t)
    t.anchor, t.single = anchor, single
    return t


def make_task(seed, index):
    for attempt in range(40):
        scale = 1.0
        for _ in range(4):
            t = build(seed, index, attempt, scale)
            if MIN_BYTES <= t.bytes <= MAX_BYTES and t.params < 256 << 20:
                return t
            # Bytes are nearly linear in the batch: aim at a log-uniform target.
            target = math.exp(random.Random(f"kb-gen:{seed}:{index}:{attempt}:b").uniform(
                math.log(MIN_BYTES * 1.1), math.log(MAX_BYTES * 0.9)))
            new_scale = scale * target / max(t.bytes, 1)
            if abs(new_scale - scale) < 1e-9 or t.batch * new_scale / scale < 0.5:
                break
            scale = new_scale
    raise RuntimeError(f"task {index}: no draw within {MIN_BYTES / GB}-{MAX_BYTES / GB} GB")


INPUT_EXPR = {
    "randn": lambda s, a: f"torch.randn({s})",
    "rand": lambda s, a: f"torch.rand({s})",
    "sign": lambda s, a: f"torch.randint(0, 2, {s}).float() * 2 - 1",
    "randint": lambda s, a: f"torch.randint(0, {a}, {s})",
    "softmax": lambda s, a: f"torch.softmax(torch.randn({s}), dim={a})",
}


def source(seed, index, t):
    summary = " -> ".join(([t.anchor] if t.anchor else []) + [o for o in t.ops if o != t.anchor])
    args = ", ".join(n for n, _, _ in t.inputs)
    init = "\n".join("        " + l for l in t.init_lines) or "        pass"
    body = "\n".join("        " + l for l in t.lines)
    inputs = []
    for name, shape, kind in t.inputs:
        k, _, a = kind.partition(":")
        s = ", ".join(map(str, shape))
        shp = f"({s},)" if len(shape) == 1 else f"({s})"
        inputs.append(INPUT_EXPR[k](shp if k in ("randint", "sign") else s, a))
    return f'''# Generated by bench/gen_tasks.py --seed {seed} (task {index}); do not edit.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """{summary}"""

    def __init__(self):
        super().__init__()
{init}

    def forward(self, {args}):
{body}
        return {t.x}


def get_inputs():
    return [{", ".join(inputs)}]


def get_init_inputs():
    return []
'''


def slug(t):
    parts = ([t.anchor] if t.anchor else []) + [o for o in t.ops if o != t.anchor]
    text = "_".join(p.replace(".", "") for p in parts)
    return re.sub(r"[^A-Za-z0-9_]", "", text)[:60]


def generate(count, seed):
    """[(file name, source, manifest entry)] for tasks 0..count-1."""
    out = []
    for i in range(count):
        t = make_task(seed, i)
        name = f"{i}_{slug(t)}.py"
        entry = {"file": name, "index": i,
                 "category": "single" if t.single else "chain",
                 "anchor": t.anchor, "ops": [o for o in t.ops if o != t.anchor],
                 "bytes": t.bytes, "inputs": [[n, s, k] for n, s, k in t.inputs],
                 "output_shape": t.shape, "classes": t.classes,
                 "ill_posed": t.ill_posed}
        out.append((name, source(seed, i, t), entry))
    return out


def histogram(entries):
    ops, anchors, classes, cats = {}, {}, {}, {}
    for e in entries:
        cats[e["category"]] = cats.get(e["category"], 0) + 1
        anchors[e["anchor"] or "none"] = anchors.get(e["anchor"] or "none", 0) + 1
        for o in e["ops"]:
            ops[o] = ops.get(o, 0) + 1
        for c in e["classes"]:
            for k in ("dim", "row", "rows"):
                key = f"{k}={c[k]}"
                classes[key] = classes.get(key, 0) + 1
    gbs = sorted(e["bytes"] / GB for e in entries)
    return {"categories": cats, "anchors": anchors, "ops": ops, "shape_classes": classes,
            "gb_min": gbs[0], "gb_median": gbs[len(gbs) // 2], "gb_max": gbs[-1],
            "ill_posed": sum(e["ill_posed"] for e in entries)}


def print_histogram(h, out=sys.stdout):
    def row(title, d):
        items = sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))
        print(f"{title}: " + ", ".join(f"{k} {v}" for k, v in items), file=out)
    row("categories", h["categories"])
    row("anchors", h["anchors"])
    row("ops", h["ops"])
    row("shape classes", h["shape_classes"])
    print(f"GB moved: min {h['gb_min']:.2f}, median {h['gb_median']:.2f}, max {h['gb_max']:.2f}; "
          f"ill-posed by construction (dropout p > 0): {h['ill_posed']}", file=out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--count", type=int, default=150)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("-o", "--output", required=True, help="folder for the task files")
    p.add_argument("--json", action="store_true", help="print the histogram as JSON")
    args = p.parse_args(argv)
    if args.count < 1:
        p.error("--count must be at least 1")
    tasks = generate(args.count, args.seed)
    os.makedirs(args.output, exist_ok=True)
    for name, text, _ in tasks:
        path = os.path.join(args.output, name)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    entries = [e for _, _, e in tasks]
    h = histogram(entries)
    manifest = {"generator": "bench/gen_tasks.py", "seed": args.seed, "count": args.count,
                "tasks": entries, "histogram": h}
    tmp = os.path.join(args.output, "manifest.json.tmp")
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(args.output, "manifest.json"))
    if args.json:
        json.dump(h, sys.stdout, indent=1, sort_keys=True)
        print()
    else:
        print(f"{args.count} tasks (seed {args.seed}) in {args.output}")
        print_histogram(h)
    return 0


if __name__ == "__main__":
    sys.exit(main())
