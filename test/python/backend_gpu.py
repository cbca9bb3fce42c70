"""kb_rewrite on a GPU with torch 2.x: optimize() and
torch.compile(backend="kb_rewrite") give the model's outputs (within the
written policy: fp32 1e-4), the backend's graphs run generated kernels
(counted), and a second optimize() is a cache hit. Prints facts for
FileCheck (test/python/backend-gpu.test)."""

import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "fixtures", "models"))
import basic_block_eval  # noqa: E402

import kb_rewrite  # noqa: E402

torch.manual_seed(0)
model = basic_block_eval.Model(64).cuda().eval()
x = torch.randn(16, 64, 56, 56, device="cuda")
with torch.no_grad():
    ref = model(x)

fast = kb_rewrite.optimize(model, (x,), quiet=True)
with torch.no_grad():
    got = fast(x)
    got = fast(x)  # after the first call's layout and speed checks
counts = fast.kb_stats["regions"]
print(f"optimize: verified={counts.get('verified', 0)} "
      f"close={torch.allclose(got, ref, rtol=1e-4, atol=1e-4)}")
again = kb_rewrite.optimize(model, (x,), quiet=True)
print(f"again: cached={again.kb_stats['cached']}")

print(f"backend registered: {kb_rewrite.backend_registered}")
torch._dynamo.reset()
compiled = torch.compile(model, backend="kb_rewrite", dynamic=False)
with torch.no_grad():
    out = compiled(x)
    out = compiled(x)
print(f"compiled: close={torch.allclose(out, ref, rtol=1e-4, atol=1e-4)}")
from kb_rewrite import backend  # noqa: E402
print(f"backend graphs rewritten: {len(backend.compiled_graphs) > 0}, "
      f"verified regions: {sum(g.kb_stats['regions'].get('verified', 0) for g in backend.compiled_graphs) > 0}")
