"""The torch.compile backend: torch.compile(model, backend="kb_rewrite").

Dynamo hands the backend each captured graph as a GraphModule whose
parameters are graph inputs (torch >= 2.5 inlines nn.Modules), with real
example tensors. The backend traces it into kb-rewrite's graph format,
rewrites it (kb_rewrite.optimize, cached by graph hash), and returns the
rewritten program's forward. Graph breaks run as dynamo runs them, each
graph compiled on its own.

Shapes: kernels are made for the example shapes. A graph dynamo made
shape-generic (symbolic sizes: `dynamic=True`, or after a recompile under
automatic dynamic shapes) runs as dynamo captured it, without kernels,
logged once; `torch.compile(model, backend="kb_rewrite", dynamic=False)`
recompiles per shape instead, each shape's rewrite cached. Any failure to
rewrite a graph also runs it as captured, logged once with the reason.
"""

import sys

_warned = set()
# The OptimizedModule of every graph this process rewrote (tests and
# benchmarks count their verified regions).
compiled_graphs = []


def _warn_once(key, text):
    if key not in _warned:
        _warned.add(key)
        print(f"kb_rewrite backend: {text}", file=sys.stderr, flush=True)


def _symbolic(torch, example_inputs):
    for x in example_inputs:
        if isinstance(x, torch.Tensor):
            if any(not isinstance(d, int) for d in x.shape):
                return True
        elif not isinstance(x, (int, float, bool)):
            return True  # a SymInt or SymFloat
    return False


def kb_rewrite_backend(gm, example_inputs, **options):
    """A dynamo backend: (GraphModule, example inputs) -> callable."""
    import torch

    from .api import optimize

    if _symbolic(torch, example_inputs):
        _warn_once(("symbolic", id(gm.graph)),
                   "a graph with symbolic shapes runs as captured (no kernels); "
                   "compile with dynamic=False for per-shape kernels")
        return gm.forward
    if not any(isinstance(x, torch.Tensor) and x.is_cuda for x in example_inputs):
        _warn_once(("cpu",), "inputs not on a GPU: graphs run as captured")
        return gm.forward
    try:
        optimized = optimize(gm, list(example_inputs), name="dynamo_graph",
                             quiet=options.pop("quiet", True), **options)
    except Exception as exc:  # the graph runs as captured, never fails
        _warn_once(("error", str(exc)[:200]),
                   f"a graph runs as captured: {type(exc).__name__}: {exc}")
        return gm.forward

    def run(*args):
        out = optimized(*args)
        return out if isinstance(out, (tuple, list)) else (out,)

    compiled_graphs.append(optimized)
    run.kb_optimized = optimized
    return run


def register():
    """Registers "kb_rewrite" with dynamo (torch >= 2.0); False without it."""
    try:
        from torch._dynamo import list_backends, register_backend
    except Exception:  # torch 1.13: no dynamo
        return False
    try:
        if "kb_rewrite" not in list_backends(exclude_tags=()):
            register_backend(name="kb_rewrite")(kb_rewrite_backend)
    except TypeError:  # older list_backends signature
        try:
            register_backend(name="kb_rewrite")(kb_rewrite_backend)
        except Exception:
            return False
    return True
