"""Which op of a rewritten forward cannot be captured in a CUDA graph.

    capture_ops.py REWRITTEN_DIR TASK.py

Runs ModelNew's graph program eagerly once (CUDA graphs off), and at every
ATen call site (kb_runtime.OpCall) and region call (Program.call) captures
that one call again, alone, into a fresh CUDA graph (thread-local mode):
the calls whose capture fails are printed with their operands (device,
dtype, shape) and the error. A failed capture
leaves torch's CUDA generators in capture mode; the runtime's
_release_generators takes them out after each. Prints the first failures
(the LLaMA decoder's whole-forward capture failed with only "operation
failed due to a previous error during capture" at the op after the cause).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from kernelbench import load_module, make_inputs  # noqa: E402

os.environ["KB_CUDA_GRAPHS"] = "0"
os.environ["KB_FORWARD_CHECK"] = "0"


def main():
    rewritten, task_path = sys.argv[1], sys.argv[2]
    task = load_module(task_path, "kb_task")
    new = load_module(os.path.join(rewritten, "model_new.py"), "kb_new")
    rt = new.kb_runtime
    failures, calls = [], [0]

    def describe(args):
        return ", ".join(
            f"{a.device.type}:{str(a.dtype).replace('torch.', '')}{list(a.shape)}"
            if isinstance(a, torch.Tensor) else repr(a)[:40] for a in args)

    def try_capture(what, fn, operands=""):
        calls[0] += 1
        g = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(g, capture_error_mode="thread_local"):
                fn()
        except Exception as e:  # the cause, at this call
            rt._release_generators()
            failures.append((calls[0], what, str(e).splitlines()[0][:160], operands))

    original_call = rt.OpCall.__call__

    def op_call(self, *args):
        out = original_call(self, *args)
        if not torch.cuda.is_current_stream_capturing() and any(
                isinstance(a, torch.Tensor) and a.is_cuda for a in args):
            try_capture(f"aten::{self.name}", lambda: original_call(self, *args),
                        describe(args))
        return out

    rt.OpCall.__call__ = op_call
    original_region = rt.Program.call

    def region_call(self, i, inputs):
        out = original_region(self, i, inputs)
        if not torch.cuda.is_current_stream_capturing():
            try_capture(f"region {i}", lambda: original_region(self, i, inputs))
        return out

    rt.Program.call = region_call
    init = task.get_init_inputs()
    torch.manual_seed(0)
    model = new.ModelNew(*init).cuda()
    x = make_inputs(task, True)
    with torch.no_grad():
        model(*x)
        torch.cuda.synchronize()
    print(f"{calls[0]} calls captured alone, {len(failures)} failed")
    for n, what, err, operands in failures[:20]:
        print(f"  call {n}: {what}({operands}): {err}")
    r = torch.randn(4, device="cuda")  # the generators still work
    print("generator after:", bool(r.isfinite().all()))


if __name__ == "__main__":
    main()
