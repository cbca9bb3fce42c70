"""kb_rewrite: fused, verified CUDA kernels for a PyTorch model's memory-bound
epilogues, from Python.

    import kb_rewrite
    fast = kb_rewrite.optimize(model.eval(), (x,))       # an nn.Module
    y = fast(x)
    kb_rewrite.save(fast, "saved/"); fast = kb_rewrite.load("saved/", model)
    compiled = torch.compile(model, backend="kb_rewrite")  # torch >= 2.0

The kb-rewrite executable does the work (found through $KB_REWRITE, the
source tree's build/, or $PATH); docs/python.md. Importing the package needs
no torch; optimize() needs torch 1.13 or later, the backend torch 2.x.
"""

__version__ = "0.1.0"

from .tools import KbRewriteError, find_binary  # noqa: E402,F401


from .api import load, optimize, save  # noqa: E402,F401


def _register_backend():
    import importlib.util
    if importlib.util.find_spec("torch") is None:
        return False
    from .backend import register
    return register()


backend_registered = _register_backend()
