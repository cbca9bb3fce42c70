#!/usr/bin/env python3
"""Checks a `kb-rewrite rewrite` directory without a GPU.

    check_model_new.py DIR [--max-elements N]

1. ModelNew builds with the original constructor arguments, and under the
   same seed has exactly Model's state_dict (keys and values), both ways.
2. The generated graph program (_kb_forward, with every region running its
   generated reference function) computes what Model.forward computes, on
   the traced shapes, on the CPU: this checks the Python emitter (every aten
   call, constant and list) independently of the kernels.
3. Where regions have channels-last variants: the runtime's channels-last
   path (convolution inputs converted, operands passed as permuted views,
   outputs permuted back) with each variant computed by the region's
   reference ops on the permuted operands gives the same result: this checks
   the permuted kernel specs and the runtime's view logic.
4. ModelNew.forward on CPU tensors takes the guarded path (the original
   forward) and returns the same result.
Prints one line per check; exits 1 on a mismatch, 77 (skipped) when the
traced inputs are larger than --max-elements.
"""

import argparse
import importlib.util
import json
import os
import sys

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class ReferenceRegions:
    """Stands in for kb_runtime.Program: every region runs its ATen ops."""

    def __init__(self, references):
        self.references = references
        self.calls = 0
        self.lib_bound = self.lib_unavailable = 0

    def cl(self, i, t, tf32=False):
        return t  # NCHW: the layout the graph was traced in

    def conv1d(self, i, conv, *args, tf32=False):
        return conv(*args)  # as traced

    def call(self, i, inputs):
        self.calls += 1
        return self.references[i](*inputs)

    def const(self, i, make):
        # Program.const: made once and reused.
        self.consts = getattr(self, "consts", {})
        if i not in self.consts:
            self.consts[i] = make()
        return self.consts[i]

    def lib(self, i, lib_fn, anchor_fn, operands):
        """A library form: the region's path gives the result; the library
        call must bind its operands and give the same shape where ATen's
        CPU build has it (cuDNN's fused convolution has no CPU kernel)."""
        out = tuple(self.call(i, (anchor_fn(*operands),)))
        try:
            alt = lib_fn(*operands)
        except (RuntimeError, NotImplementedError):
            self.lib_unavailable += 1
            return out
        assert alt[0].shape == out[0].shape, f"library form of region {i}"
        self.lib_bound += 1
        return out


class PermutedReference:
    """Stands in for a channels-last kernel: checks the operands it is given
    against the variant's spec, then computes what the kernel must: the
    region's NCHW ops on its operands in NCHW order, results permuted to
    the variant's layout (ops that index dim 1, such as an eval-mode batch
    norm, see their channels there)."""

    def __init__(self, spec, reference, shapes):
        self.spec, self.reference, self.calls = spec, reference, 0
        self.shapes = shapes  # the region's NCHW input shapes
        self.guard_failures = 0

    def _to_nchw(self, v, shape):
        perm = self.spec["perm"]
        padded = [1] * (len(perm) - len(shape)) + list(shape)
        inverse = [perm.index(d) for d in range(len(perm))]
        return v.reshape([padded[p] for p in perm]).permute(inverse).reshape(shape)

    def run(self, views):
        for v, s in zip(views, self.spec["inputs"]):
            assert list(v.shape) == s["shape"], f"operand {list(v.shape)} vs {s['shape']}"
            if not v.is_contiguous():
                # The kernel's guard: the convolution did not return
                # channels-last data (CPU transposed 3-d convolutions).
                self.guard_failures += 1
                return None
        self.calls += 1
        if self.spec.get("reads_only"):
            # The kernel reads input 0 through permute(inverse) itself.
            perm = self.spec["perm"]
            views = [views[0].permute([perm.index(d) for d in range(len(perm))])] \
                + list(views[1:])
        if self.spec.get("reads_only"):
            out = list(self.reference(*views))
            # ... and writes NCHW-contiguous outputs.
            out = [o.contiguous() for o in out]
        else:
            nchw = [self._to_nchw(v, shape) for v, shape in zip(views, self.shapes)]
            out = [o.permute(self.spec["perm"])
                   for o in self.reference(*nchw)]
        for o, s in zip(out, self.spec["outputs"]):
            assert list(o.shape) == s["shape"]
        return out


def close(a, b, tol, amp):
    """allclose at `tol`, or at the written policy's 1e-2 for 16-bit
    results and for models traced under autocast."""
    if amp or a.dtype in (torch.float16, torch.bfloat16):
        tol = max(tol, 1e-2)
    return torch.allclose(a.float(), b.float(), atol=tol, rtol=tol, equal_nan=True)


def flat(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--max-elements", type=int, default=20_000_000)
    args = p.parse_args()
    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    with open(os.path.join(args.dir, "params.json")) as f:
        params = json.load(f)
    specs = manifest["inputs"]
    total = sum(torch.Size(s["shape"]).numel() for s in specs if s["kind"] == "tensor")
    if total > args.max_elements:
        print(f"skipped: {total} input elements > {args.max_elements}")
        return 77
    new = load(os.path.join(args.dir, "model_new.py"), "kb_checked_model_new")
    init = params.get("init_inputs", [])
    seed = params.get("seed", 0)
    torch.manual_seed(seed)
    model = new._original.Model(*init)
    torch.manual_seed(seed)
    model_new = new.ModelNew(*init)
    if not manifest.get("training", True):
        model.eval()
        model_new.eval()
    # A model exported with --dtype: its parameters were converted after
    # construction (as model.half() would), so both are here too.
    dtypes = {q["dtype"] for q in params.get("parameters", [])}
    if len(dtypes) == 1 and dtypes & {"float16", "bfloat16"}:
        model.to(getattr(torch, dtypes.pop()))
        model_new.to(model.parameters().__next__().dtype)
    sd, sd_new = model.state_dict(), model_new.state_dict()
    assert list(sd) == list(sd_new), f"state_dict keys differ: {list(sd)} vs {list(sd_new)}"
    for k in sd:
        assert torch.equal(sd[k], sd_new[k]), f"state_dict['{k}'] differs"
    model_new.load_state_dict(sd)
    model.load_state_dict(model_new.state_dict())
    print(f"state_dict: {len(sd)} entries, identical")

    torch.manual_seed(1)
    args_in = []
    for s in specs:
        if s["kind"] == "tensor":
            dtype = getattr(torch, s["dtype"])
            args_in.append(torch.randn(s["shape"], dtype=dtype) if dtype.is_floating_point
                           else torch.rand(s["shape"]) > 0.5 if dtype == torch.bool
                           else torch.randint(0, 3, s["shape"], dtype=dtype))
        else:
            args_in.append(s.get("value"))
    tensors = [a for a, s in zip(args_in, specs) if s["kind"] == "tensor"]
    # Training-mode batch norm updates running statistics: give each
    # program its own copy of the state.
    import copy
    model_a, model_b = copy.deepcopy(model), copy.deepcopy(model)
    # Traced under torch.autocast (kb-export --autocast): Model.forward runs
    # under it, the graph program holds its casts.
    import contextlib
    amp = params.get("autocast") or ""
    try:
        ctx = (torch.autocast("cpu", dtype=getattr(torch, amp), cache_enabled=False)
               if amp else contextlib.nullcontext())
        with ctx:
            pass
    except RuntimeError as exc:  # torch 1.13's CPU autocast: bfloat16 only
        print(f"skipped: autocast {amp} does not run on this CPU torch ({exc})")
        return 77
    with torch.no_grad():
        with ctx:
            ref = flat(model_a(*args_in))
        regions = ReferenceRegions(new._KB_REFERENCES)
        got = flat(new._kb_forward(model_b, regions, *tensors))
    assert len(ref) == len(got), f"{len(ref)} outputs vs {len(got)}"
    for i, (a, b) in enumerate(zip(ref, got)):
        assert a.shape == b.shape, f"output {i}: shape {tuple(a.shape)} vs {tuple(b.shape)}"
        assert a.dtype == b.dtype, f"output {i}: dtype {a.dtype} vs {b.dtype}"
        assert close(a, b, 1e-5, amp), \
            f"output {i}: max |diff| {float((a.float() - b.float()).abs().max())}"
    for (k, a), b in zip(model_a.state_dict().items(), model_b.state_dict().values()):
        assert torch.allclose(a.float(), b.float(), atol=1e-6), f"state '{k}' after forward differs"
    print(f"graph program: {len(ref)} outputs match Model.forward "
          f"({regions.calls} regions through their reference ops)")
    if regions.lib_bound or regions.lib_unavailable:
        print(f"library forms: {regions.lib_bound} ran on the CPU, "
              f"{regions.lib_unavailable} have no CPU kernel")

    variants = [r.get("channels_last") for r in manifest["regions"]]
    if any(variants):
        program = new.kb_runtime.Program(args.dir, new._kb_forward, new._KB_REFERENCES,
                                         None)
        # A failed channels-last guard falls back to the NCHW region: here
        # the region's reference ops.
        program.regions = [None] * len(variants)
        # A "convert" region (no channels-last kernel) gets its convolution's
        # channels-last output made contiguous, then its reference ops.
        convert = new.kb_runtime.CONVERT
        program.cl_regions = [convert if v and v.get("convert") else
                              PermutedReference(v, ref_fn, [i["shape"] for i in r["inputs"]])
                              if v else None
                              for v, ref_fn, r in zip(variants, new._KB_REFERENCES,
                                                      manifest["regions"])]
        permuted = [r for r in program.cl_regions if isinstance(r, PermutedReference)]
        converted = sum(1 for r in program.cl_regions if r is convert)
        program.use_cl = True
        model_c = copy.deepcopy(model)
        with torch.no_grad():
            got_cl = flat(program._run(model_c, *tensors))
        # The convolutions run channels-last here, so the program is held
        # to eager's outputs, or to eager's own channels-last run where the
        # CPU's convolution rounds differently in that layout (torch 1.13's
        # bfloat16 convolution on AVX2 CPUs: up to 8 ulp apart).
        ref_cl = None
        for i, (a, b) in enumerate(zip(ref, got_cl)):
            if close(a, b, 1e-4, amp):
                continue
            if ref_cl is None:
                model_d = copy.deepcopy(model).to(memory_format=torch.channels_last)
                cl_in = [t.to(memory_format=torch.channels_last)
                         if isinstance(t, torch.Tensor) and t.dim() == 4 else t
                         for t in args_in]
                with torch.no_grad(), ctx:
                    ref_cl = flat(model_d(*cl_in))
            assert close(ref_cl[i], b, 1e-4, amp), \
                (f"channels-last output {i}: max |diff| "
                 f"{float((a.float() - b.float()).abs().max())} from eager, "
                 f"{float((ref_cl[i].float() - b.float()).abs().max())} from eager "
                 f"run channels-last")
            print(f"channels-last output {i}: as eager run channels-last "
                  f"(max |diff| {float((a.float() - b.float()).abs().max())} from "
                  f"eager's contiguous run: this CPU's convolution rounds by layout)")
        calls = sum(r.calls for r in permuted)
        assert calls or converted, "no channels-last variant ran"
        misses = sum(r.guard_failures for r in permuted)
        print(f"channels-last: {calls} regions through permuted operands"
              f"{f', {converted} converted to NCHW' if converted else ''} match"
              f"{f' ({misses} guarded back to NCHW)' if misses else ''}")

    with torch.no_grad(), ctx:
        guarded = flat(model_new(*args_in))
    for a, b in zip(ref, guarded):
        assert close(a, b, 1e-5, amp), "guarded forward differs"
    reasons = model_new._kb.reasons
    assert reasons, "CPU inputs should have taken the original forward"
    print(f"guards: CPU inputs ran the original forward ({', '.join(reasons)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
