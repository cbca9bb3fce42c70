"""kb_rewrite's Python API on a machine without a GPU (torch 1.13 in CI):
optimize() traces in-process, rewrites, caches by graph hash, and returns a
module whose forward on CPU inputs is the original one; save/load round
trip; errors carry kb-rewrite's message. Prints facts for FileCheck."""

import os
import subprocess
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "fixtures", "models"))
import basic_block_eval  # noqa: E402
import conv_bn_relu_train  # noqa: E402

import kb_rewrite  # noqa: E402

out_dir = sys.argv[1]
print(f"backend registered: {kb_rewrite.backend_registered} "
      f"(torch {torch.__version__.split('+')[0]})")

torch.manual_seed(0)
model = basic_block_eval.Model(8)
x = torch.randn(2, 8, 16, 16)
fast = kb_rewrite.optimize(model, (x,), quiet=True)
print(f"module: {type(fast).__name__}, an nn.Module: {isinstance(fast, torch.nn.Module)}")
stats = fast.kb_stats
print(f"first optimize: cached={stats['cached']} regions={sorted(stats['regions'].items())}")
files = sorted(os.listdir(stats["package"]))
print(f"package: kb_program.py={'kb_program.py' in files} model_new.py={'model_new.py' in files}")
with torch.no_grad():
    same = torch.equal(fast(x), model(x))
print(f"CPU forward equals the model's: {same}; original forward because "
      f"{', '.join(stats['fallbacks'])}")
print(f"state_dict keys: {list(fast.state_dict())[0]}")
# Traced again in the same process (TorchScript mangles the class names of
# the second trace): the same graph, a cache hit.
again = kb_rewrite.optimize(model, (x,), quiet=True)
print(f"same process again: cached={again.kb_stats['cached']} "
      f"same package={again.kb_stats['package'] == stats['package']}")

# Other argument shapes: rewritten once per shape (as dynamo recompiles),
# up to `respecialize` of them. The kernels need CUDA tensors, so here the
# GPU check is stood in for and every program runs the original forward.
fast._on_gpu = lambda args: True
x4 = torch.randn(4, 8, 16, 16)
with torch.no_grad():
    same4 = torch.equal(fast(x4), model(x4))
    fast(x4)
specs = fast.kb_stats["specialisations"]
print(f"new shape: equal={same4} specialisations={len(specs)} "
      f"own package={specs[0]['package'] != stats['package']}")
fast._kb_limit = 1
with torch.no_grad():
    fast(torch.randn(3, 8, 16, 16))
print(f"past the limit: specialisations={len(fast.kb_stats['specialisations'])} "
      f"shapes seen={len(fast._kb_shapes)}")
del fast._on_gpu

# A new process finds the package in the cache (no kb-rewrite run).
code = (
    "import sys, torch; sys.path.insert(0, %r); import basic_block_eval, kb_rewrite\n"
    "torch.manual_seed(0); m = basic_block_eval.Model(8)\n"
    "f = kb_rewrite.optimize(m, (torch.randn(2, 8, 16, 16),), quiet=True)\n"
    "print(f.kb_stats['cached'], f.kb_stats['package'])\n"
) % os.path.join(here, "..", "fixtures", "models")
second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
cached, package = (second.stdout.split() + ["?", "?"])[:2]
print(f"second process: cached={cached} same package={package == stats['package']}")
if second.returncode:
    print(second.stderr)

# Training mode: another graph, another package; mode= switches the module.
train = kb_rewrite.optimize(model, (x,), mode="train", quiet=True)
print(f"mode=train: module training={model.training} "
      f"other package={train.kb_stats['package'] != stats['package']}")
model.eval()

# save / load onto a module built the same way.
saved = os.path.join(out_dir, "saved")
kb_rewrite.save(fast, saved)
print(f"saved: {sorted(os.listdir(saved))}")
torch.manual_seed(1)
fresh = basic_block_eval.Model(8)
loaded = kb_rewrite.load(saved, fresh)
with torch.no_grad():
    print(f"loaded: forward equals the saved model's {torch.equal(loaded(x), model(x))}, "
          f"training={fresh.training}")
try:
    kb_rewrite.load(saved, conv_bn_relu_train.Model(16, 32))
except kb_rewrite.KbRewriteError as exc:
    print(f"load onto another class: KbRewriteError: {exc}")

# kb-rewrite's own errors become KbRewriteError with its message.
os.environ["KB_REWRITE"] = os.path.join(out_dir, "missing-kb-rewrite")
try:
    kb_rewrite.optimize(conv_bn_relu_train.Model(16, 32), (torch.randn(2, 16, 8, 8),),
                        quiet=True)
except kb_rewrite.KbRewriteError as exc:
    print(f"bad KB_REWRITE: exit {exc.exit_code}: {exc}")
del os.environ["KB_REWRITE"]
try:
    kb_rewrite.optimize(conv_bn_relu_train.Model(16, 32), (torch.randn(2, 16, 8, 8),),
                        quiet=True, extra_args=["--numerics", "sloppy"])
except kb_rewrite.KbRewriteError as exc:
    print(f"kb-rewrite refused: exit {exc.exit_code}: {exc}")

# What the torch.compile backend hands optimize(): a GraphModule whose
# parameters are graph inputs (dynamo lifts them; here torch.fx on a
# functional block). Its regions are found and its program runs.
import torch.fx  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Lifted(torch.nn.Module):
    def forward(self, x, w, mean, var, gamma, beta):
        y = F.conv2d(x, w, None, 1, 1)
        y = F.batch_norm(y, mean, var, gamma, beta, False, 0.1, 1e-5)
        return (torch.relu(y) + x,)


gm = torch.fx.symbolic_trace(Lifted())
lifted_args = [torch.randn(2, 8, 16, 16), torch.randn(8, 8, 3, 3), torch.randn(8),
               torch.rand(8) + 0.5, torch.randn(8), torch.randn(8)]
lifted = kb_rewrite.optimize(gm, lifted_args, quiet=True, name="dynamo_graph")
with torch.no_grad():
    got, want = lifted(*lifted_args), gm(*lifted_args)
print(f"graph module: regions={sorted(lifted.kb_stats['regions'].items())} "
      f"tuple={isinstance(got, tuple)} equal={torch.equal(got[0], want[0])}")
from kb_rewrite import backend  # noqa: E402
print(f"backend on CPU inputs: runs as captured "
      f"{backend.kb_rewrite_backend(gm, lifted_args) == gm.forward}")
