"""The CUDA graph replay of an optimized model follows its parameters: the
call's key (the extension's CallGuard) holds the address, type and shape
of every tensor the module holds, read from its parameter and buffer dicts
at each call. A parameter changed in place, given new storage, or replaced
by another Parameter gives the outputs eager gives with it, never a replay
of memory the graph captured. And the backend's graphs, whose arguments
are every parameter, are checked in one C++ pass. Prints facts for
FileCheck (test/python/call-guard-gpu.test)."""

import os
import sys

os.environ["KB_CUDA_GRAPHS"] = "1"  # replay without the timing decision

import torch  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "fixtures", "models"))
import basic_block_eval  # noqa: E402

import kb_rewrite  # noqa: E402

torch.manual_seed(0)
model = basic_block_eval.Model(64).cuda().eval()
x = torch.randn(16, 64, 56, 56, device="cuda")
fast = kb_rewrite.optimize(model, (x,), quiet=True)


def agree(label):
    with torch.no_grad():
        want = model(x)
        for _ in range(3):  # eager, capture, replay
            got = fast(x)
    close = torch.allclose(got, want, rtol=1e-4, atol=1e-4)
    keys = len(fast._kb.graphs.entries) if fast._kb.graphs else 0
    print(f"{label}: close={close} graph_keys={keys}")


agree("traced")
print(f"call guard: {fast._kb._call_guard is not None}")
with torch.no_grad():
    model.conv1.weight.mul_(0.5)  # same storage: the replay reads it
agree("in place")
with torch.no_grad():
    model.conv2.weight.data = model.conv2.weight.data.clone() * 1.5
agree("new storage")
model.bn1.bias = torch.nn.Parameter(model.bn1.bias.detach() + 0.25)
agree("new parameter")
model.bn2.running_mean = model.bn2.running_mean.clone() - 0.125
agree("new buffer")

torch._dynamo.reset()
compiled = torch.compile(model, backend="kb_rewrite", dynamic=False)
with torch.no_grad():
    want = model(x)
    for _ in range(3):
        out = compiled(x)
from kb_rewrite import backend  # noqa: E402
graph = backend.compiled_graphs[-1]
print(f"backend: close={torch.allclose(out, want, rtol=1e-4, atol=1e-4)} "
      f"arguments={len(graph._kb.inputs)} call_guard={graph._kb._call_guard is not None}")
