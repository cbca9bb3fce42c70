"""Which form of a bool `&` breaks CUDA graph capture (the LLaMA decoder's
mask: bench/probes/capture_ops.py found both of its `aten::__and__` calls
failing alone, one of a 0-d CPU bool and a [1, 1, 256, 256] CUDA bool, one
of two CUDA bools, [1, 1, 256, 256] and [8, 1, 256, 256]).

    capture_and.py

Captures each form alone into a fresh CUDA graph (thread-local mode) after
one eager call, and prints ok or the error; with torch 2.x, also the
overload torch.ops.aten.__and__ resolves to.
"""
import torch


def release():
    # A failed capture leaves the default generators in capture mode.
    for i in range(torch.cuda.device_count()):
        g = torch.cuda.default_generators[i]
        g.graphsafe_set_state(g.clone_state())


def main():
    dev = "cuda"
    a = torch.rand(1, 1, 256, 256, device=dev) > 0.5
    b = torch.rand(8, 1, 256, 256, device=dev) > 0.5
    s = torch.ones((), dtype=torch.bool)
    sc = torch.ones((), dtype=torch.bool, device=dev)
    forms = {
        "ops.aten.__and__(a, b)": lambda: torch.ops.aten.__and__(a, b),
        "ops.aten.__and__.Tensor(a, b)": lambda: torch.ops.aten.__and__.Tensor(a, b),
        "ops.aten.bitwise_and(a, b)": lambda: torch.ops.aten.bitwise_and(a, b),
        "a & b": lambda: a & b,
        "torch.logical_and(a, b)": lambda: torch.logical_and(a, b),
        "ops.aten.__and__(cpu0d, a)": lambda: torch.ops.aten.__and__(s, a),
        "ops.aten.__and__(cuda0d, a)": lambda: torch.ops.aten.__and__(sc, a),
        "ops.aten.__and__.Tensor(cpu0d, a)": lambda: torch.ops.aten.__and__.Tensor(s, a),
        "ops.aten.__or__(a, b)": lambda: torch.ops.aten.__or__(a, b),
        "ops.aten.eq(a, b)": lambda: torch.ops.aten.eq(a, b),
        "ops.aten.mul(a, b)": lambda: torch.ops.aten.mul(a, b),
    }
    resolve = getattr(torch._C, "_jit_resolve_packet", None)
    if resolve:
        for args in ((a, b), (s, a)):
            try:
                print("resolves to", resolve("aten::__and__", *args))
            except Exception as e:  # noqa: BLE001
                print("resolve failed:", str(e).splitlines()[0][:120])
    for name, fn in forms.items():
        fn()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(g, capture_error_mode="thread_local"):
                fn()
            print(f"ok    {name}")
        except Exception as e:  # noqa: BLE001
            release()
            print(f"FAIL  {name}: {str(e).splitlines()[0][:140]}")


if __name__ == "__main__":
    main()
