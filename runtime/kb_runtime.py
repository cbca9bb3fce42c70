"""kb_runtime: runs a model rewritten by `kb-rewrite rewrite`.

A rewritten model is a directory: `manifest.json` (the regions, their launch
rules and guards), `kernels/*.cu`, `model_new.py` (the graph as
torch.ops.aten calls, with each fused region going through `Program.call`),
and a copy of this file and of `kb_runtime_ext.cpp`, the small C++
extension that compiles kernels with NVRTC and launches them. The extension
is built once per machine and torch version (~1 min) under
$KB_CACHE_DIR (default ~/.cache/kb-rewrite); compiled kernels are cached
there too, keyed by source, architecture and torch/CUDA version.

Fallbacks (all exact, all cheap to decide; docs/rewrite.md):
  * arguments that differ from the traced ones (shapes, dtypes, devices,
    non-tensor values), keyword arguments, `.eval()` on a model traced in
    training mode, or autograd needing gradients -> the original forward;
  * a region whose guard fails at run time (contiguity, alignment, device),
    whose kernel did not compile, or that kb-verify rejected -> that
    region's original ATen ops.

Never slower: the first call times the original forward against the
rewritten one (and the second, where CUDA graph replay is measured, against
its replay); unless the rewritten forward is measurably faster
(`measurably_faster`, the rule of include/kb/Verify/SpeedRule.h), every
later call runs the original forward. KB_FORWARD_CHECK=0 skips the check.

Environment: KB_CUDA_GRAPHS=0 disables CUDA graph replay, =1 uses it
without timing it against the eager forward first; KB_RUNTIME=off
runs every region through its ATen ops; KB_CHANNELS_LAST=0/1/tf32 (tf32:
channels-last, TF32 convolutions' inputs rounded as NCHW rounds them) and
KB_LIBRARY_EPILOGUES=0/1 force the layout and the library forms instead of
timing them; KB_RUNTIME_VERBOSE=1 prints what was loaded, what was chosen
and why anything fell back.
"""

import ast
import contextlib
import gc
import hashlib
import importlib.util
import json
import os
import sys
import traceback
import warnings

import torch

VERSION = 1
_EXT = None


def _verbose():
    return os.environ.get("KB_RUNTIME_VERBOSE", "0") not in ("", "0")


class KbFallbackWarning(UserWarning):
    """A rewritten model ran its original forward (first time per reason)."""


def _log(msg):
    if _verbose():
        print(f"kb_runtime: {msg}", file=sys.stderr)


def cache_dir():
    return os.environ.get("KB_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "kb-rewrite")


def extension():
    """Builds (once per machine and torch version) and loads the extension."""
    global _EXT
    if _EXT is not None:
        return _EXT
    from torch.utils.cpp_extension import CUDA_HOME, load
    if not CUDA_HOME:
        raise RuntimeError("kb_runtime needs the CUDA toolkit (nvrtc); set CUDA_HOME")
    lib = os.path.join(CUDA_HOME, "lib64")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "kb_runtime_ext.cpp")
    with open(src, "rb") as f:
        text = f.read()
    key = hashlib.sha256(text + torch.__version__.encode()).hexdigest()[:16]
    build = os.path.join(cache_dir(), "runtime", key)
    os.makedirs(build, exist_ok=True)
    # Build from one path per version: every rewritten model carries its own
    # copy, and ninja rebuilds (a minute) whenever the source path changes.
    stable = os.path.join(build, "kb_runtime_ext.cpp")
    if not os.path.exists(stable):
        tmp = f"{stable}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(text)
        os.replace(tmp, stable)
    _EXT = load(name=f"kb_runtime_ext_{key}", sources=[stable],
                build_directory=build, with_cuda=True,
                extra_cflags=["-O2"], verbose=_verbose(),
                extra_ldflags=[f"-L{lib}", f"-L{os.path.join(lib, 'stubs')}",
                               "-lnvrtc", "-lcuda", f"-Wl,-rpath,{lib}"])
    return _EXT


def load_module(path, name):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
        ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a // b,
        ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}
_CALLS = {"ceil_div": lambda a, b: -(-a // b), "min": min, "max": max}


def eval_launch_expr(text, variables):
    """Integer launch expressions as kb-verify evaluates them (docs/verify.md)."""
    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id in variables:
            return variables[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in _CALLS and not node.keywords):
            return _CALLS[node.func.id](*[ev(a) for a in node.args])
        raise ValueError(f"unsupported launch expression '{text}'")
    return ev(ast.parse(str(text), mode="eval"))


def _compiled(ext, source, entry, arch):
    key = hashlib.sha256("\0".join(
        [source, entry, arch, torch.__version__, str(torch.version.cuda)]
    ).encode()).hexdigest()
    path = os.path.join(cache_dir(), "cubin", key[:2], key + ".cubin")
    if os.path.exists(path) and os.path.exists(path + ".name"):
        with open(path, "rb") as f, open(path + ".name") as g:
            return f.read(), g.read()
    cubin, lowered, _log_text = ext.compile(source, entry, arch)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(cubin)
    with open(tmp + ".name", "w") as g:
        g.write(lowered)
    os.replace(tmp + ".name", path + ".name")
    os.replace(tmp, path)
    return cubin, lowered


def _sibling(name):
    """A module of the runtime next to this file (kb_runtime_graphs.py)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_graphs = _sibling("kb_runtime_graphs")
_storage_use_count = _graphs._storage_use_count
_capture = _graphs._capture
_release_generators = _graphs._release_generators
_capture_failure = _graphs._capture_failure
_elapsed_ms = _graphs._elapsed_ms
_buffers_kept = _graphs._buffers_kept
_Captured = _graphs._Captured
_argument_key = _graphs._argument_key
_GraphRunner = _graphs._GraphRunner
measurably_faster = _graphs.measurably_faster
_median = _graphs._median
forward_choice = _graphs.forward_choice


def round_tf32(t):
    """float32 `t` rounded to TF32 (10 mantissa bits), to nearest with ties
    away from zero; inf and nan unchanged (the extension's transpose rounds
    the same way in the same pass)."""
    b = t.view(torch.int32)
    finite = (b & 0x7f800000) != 0x7f800000
    return torch.where(finite, (b + 0x1000) & -8192, b).view(torch.float32)


# cl_regions[i] for a region with no channels-last kernel whose convolution
# may still run channels-last (manifest "channels_last": {"convert": true}):
# its output is made contiguous before the NCHW kernel, and the layout
# timing weighs that copy against the convolution's gain.
CONVERT = "convert"


# Per output dtype, how far another layout's result may move (rtol = atol):
# cuDNN's algorithm for channels-last data rounds differently, by a unit
# of the last place of a 16-bit output at most where float32 moves ~1e-6.
_LAYOUT_TOLERANCE = {torch.float32: 1e-5, torch.float16: 2.0 ** -10,
                     torch.bfloat16: 2.0 ** -7}


def _layouts_agree(a, b):
    tol = _LAYOUT_TOLERANCE.get(a.dtype, 1e-5)
    return a.shape == b.shape and torch.allclose(
        a.float(), b.float(), rtol=tol, atol=tol, equal_nan=True)


def _same_bits(want, got):
    """Whether two probes (region -> its input tensors) hold the same sites
    and bit-identical tensors."""
    if want.keys() != got.keys():
        return False
    for i, ts in want.items():
        if len(ts) != len(got[i]):
            return False
        for a, b in zip(ts, got[i]):
            if a.shape != b.shape or a.dtype != b.dtype or \
                    not torch.equal(a.reshape(-1).view(torch.uint8),
                                    b.reshape(-1).view(torch.uint8)):
                return False
    return True


def _mask_form(mask):
    """"none", "causal" or "kept" for an SDPA mask (Program.attn_mask)."""
    if mask.dtype == torch.bool:
        attend, blocked = mask, ~mask
    else:
        attend, blocked = mask == 0, mask <= -1e30
    if bool(attend.all()):
        return "none"
    if mask.dim() < 2 or mask.shape[-1] != mask.shape[-2]:
        return "kept"
    n = mask.shape[-1]
    lower = torch.ones(n, n, dtype=torch.bool, device=mask.device).tril()
    if bool((attend == lower).all()) and bool((blocked == ~lower).all()):
        return "causal"
    return "kept"


def _row_major_at(inputs, positions):
    """`inputs` with those at `positions` made row-major (a copy only where
    they are not)."""
    inputs = list(inputs)
    for k in positions:
        if isinstance(inputs[k], torch.Tensor):
            inputs[k] = inputs[k].contiguous()
    return inputs


class Program:
    """The runtime half of one rewritten model."""

    def __init__(self, directory, forward, references, original_forward):
        self.dir = directory
        with open(os.path.join(directory, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.forward_fn = forward
        self.references = references
        self.original_forward = original_forward
        self.inputs = self.manifest["inputs"]
        self._checks = None  # _mismatch's per-argument tuples, made once
        # The extension's CallGuard (check()), made when the kernels load, and
        # the (dict, name) pairs of the module's parameters and buffers it
        # reads at every call, made once per module.
        self._call_guard = None
        self._state_of = (None, None)
        self._value_positions = [i for i, spec in enumerate(self.inputs)
                                 if spec["kind"] != "tensor"]
        self.training = self.manifest.get("training", True)
        self.tensor_positions = [i for i, spec in enumerate(self.inputs)
                                 if spec["kind"] == "tensor"]
        self.regions = None
        # A kernel may write extra outputs in place (batch_norm's running
        # statistics); the graph uses the leading ones.
        self.num_results = [len(r.get("outputs", [])) - len(r.get("updates", []))
                            for r in self.manifest["regions"]]
        self.fallbacks = [0] * len(references)
        # Inputs kb-stream-layouts made row-major where eager's layout is
        # another (manifest "relaid"): when their producer ran its ATen ops,
        # the kernel reads a row-major copy instead of failing its guard.
        self.relaid = [[k for k, t in enumerate(r.get("inputs", []))
                        if t.get("relaid")]
                       for r in self.manifest["regions"]]
        self.cl_regions = [None] * len(references)
        # Regions with a step or singular op (manifest "exact_layout"): a layout
        # other than the traced one must give them bit-identical inputs.
        # _choose_layout fills _probe with their inputs (made contiguous)
        # on one run of each layout.
        self.exact_sites = {i for i, r in enumerate(self.manifest["regions"])
                            if r.get("exact_layout")}
        self._probe = None
        self.use_cl = False
        # Channels-last inputs of TF32 forward convolutions rounded as
        # cuDNN's NCHW path rounds them (Program.cl), and whether the
        # forward has such a convolution.
        self.cl_tf32 = False
        self.tf32_sites = False
        self._ext = self._arch = None
        self.layout_ms = None
        self.graphs = None
        self.reasons = {}
        # Region index -> True (library form) / False (anchor + kernel), and
        # what the choice measured.
        self.lib_choice = {}
        self.library_ms = {}
        # Never slower: the first calls time the original forward against
        # this one; "original" makes every later call run the original.
        self.forward_ms = None
        self.forward_choice = None
        # Program.const's values.
        self.consts = {}
        # attn_mask's decisions: site -> "none", "causal" or "kept".
        self.attn_masks = {}

    # ---- guards -----------------------------------------------------------
    def check(self, module, args, kwargs):
        """(reason, key): the guard's refusal (None: the traced arguments)
        and, where the extension's CallGuard made it, the CUDA graph key of
        the call (None: _GraphRunner makes its own). One C++ pass over the
        tensor arguments once the kernels are loaded; the Python guard
        before that and to name what differs."""
        guard = self._call_guard
        if guard is None or kwargs or len(args) != len(self.inputs) or \
                module.training != self.training:
            return self._mismatch(module, args, kwargs), None
        key = guard.check(args if type(args) is tuple else tuple(args),
                          self._state(module))
        if key is None or self._value_positions or torch.is_grad_enabled():
            reason = self._mismatch(module, args, kwargs)
            if reason is not None or key is None:
                return reason, None
        return None, (id(module), key)

    def _state(self, module):
        """The (dict, name) pairs of `module`'s parameters and buffers, for
        CallGuard to read the tensors they hold at every call."""
        held, pairs = self._state_of
        if held is not module:
            pairs = [(d, name) for m in module.modules()
                     for d in (m._parameters, m._buffers) for name in d]
            self._state_of = (module, pairs)
        return pairs

    def _python_key(self, module, tensors):
        """CallGuard's key made in Python, where it made none (a dtype it
        lacks, the Python guard's calls): the same addresses and layouts."""
        return (_argument_key((module, *tensors)),
                tuple((v.data_ptr(), v.dtype, v.shape, v.stride())
                      if isinstance(v, torch.Tensor) else None
                      for v in (d.get(n) for d, n in self._state(module))))

    def _make_call_guard(self, ext):
        specs = [self.inputs[i] for i in self.tensor_positions]
        try:
            self._call_guard = ext.CallGuard(
                list(self.tensor_positions), [list(s["shape"]) for s in specs],
                [s["dtype"] for s in specs])
        except Exception as e:  # an extension without it, a dtype it lacks
            _log(f"call guard: {e}; the Python guard checks every call")

    def _mismatch(self, module, args, kwargs):
        if kwargs:
            return "keyword arguments"
        if len(args) != len(self.inputs):
            return f"{len(args)} arguments, traced with {len(self.inputs)}"
        if module.training != self.training:
            return "training mode differs from the traced one"
        # Per argument as few Python operations as can be: a graph from
        # dynamo passes every parameter (ResNet-50: 320 tensors), and a
        # list and a dtype string each cost ~1 ms a call there (session 44).
        checks = self._checks
        if checks is None:
            checks = self._checks = [
                (True, torch.Size(spec["shape"]), getattr(torch, spec["dtype"], None),
                 spec["name"]) if spec["kind"] == "tensor"
                else (False, spec.get("value"), None, spec["name"])
                for spec in self.inputs]
        for a, (tensor, want, dtype, name) in zip(args, checks):
            if tensor:
                if not isinstance(a, torch.Tensor):
                    return f"'{name}' is not a tensor"
                if a.shape != want or a.dtype is not dtype or not a.is_cuda:
                    return f"'{name}' differs from the traced tensor"
            elif isinstance(a, torch.Tensor) or a != want:
                return f"'{name}' differs from the traced value"
        if torch.is_grad_enabled():
            if any(args[i].requires_grad for i in self.tensor_positions) or \
                    any(p.requires_grad for p in module.parameters()):
                return "autograd needs gradients"
        return None

    def _load(self):
        self.regions = [None] * len(self.references)
        if os.environ.get("KB_RUNTIME", "on") == "off":
            return
        ext = extension()
        dev = torch.cuda.current_device()
        major, minor = torch.cuda.get_device_capability(dev)
        arch = f"sm_{major}{minor}"
        self._ext, self._arch = ext, arch
        variables = {"sm_count": torch.cuda.get_device_properties(
            dev).multi_processor_count}
        def make(r, name):
            if r["status"] not in ("verified", "unverified"):
                _log(f"{name}: {r['status']}, running its ATen ops")
                return None
            try:
                with open(os.path.join(self.dir, r["source"])) as f:
                    source = f.read()
                cubin, lowered = _compiled(ext, source, r["entry"], arch)
                region = ext.Region(
                    cubin, lowered,
                    [eval_launch_expr(e, variables) for e in r["grid"]],
                    [eval_launch_expr(e, variables) for e in r["block"]],
                    eval_launch_expr(r["shared_bytes"], variables),
                    [t["shape"] for t in r["inputs"]],
                    [t["shape"] for t in r["outputs"]],
                    [tuple(u) for u in r.get("updates", [])],
                    eval_launch_expr(r.get("workspace_bytes", "0"), variables),
                    bool(r.get("grid_sync", False)),
                    [t.get("dtype", "float32") for t in r["outputs"]],
                    [t.get("strides", []) for t in r["inputs"]],
                    [t.get("strides", []) for t in r["outputs"]],
                    [t.get("dtype", "float32") for t in r["inputs"]])
                _log(f"{name}: loaded ({r['status']})")
                return region
            except Exception as e:  # the ATen ops stay correct
                warnings.warn(f"kb_runtime: {name}: {e}; running its "
                              "ATen ops instead")
                return None

        for i, r in enumerate(self.manifest["regions"]):
            self.regions[i] = make(r, r["name"])
            spec = r.get("channels_last")
            if spec is not None and spec.get("convert"):
                # Its ATen ops read the contiguous copy as the kernel would.
                self.cl_regions[i] = CONVERT
            elif spec is not None and self.regions[i] is not None:
                self.cl_regions[i] = make(spec, r["name"] + "_cl")
        self._make_call_guard(ext)
        graphs = os.environ.get("KB_CUDA_GRAPHS", "")
        if self.manifest.get("cuda_graphs", True) and graphs != "0":
            self.graphs = _GraphRunner(self._run, measure=graphs != "1")

    # ---- layout ---------------------------------------------------------------
    def cl(self, i, t, tf32=False):
        """The input of a convolution that feeds region i, in its layout.

        `tf32`: the convolution is a forward one in TF32. cuDNN's NCHW path
        rounds its inputs to TF32 with ties away from zero in its own
        transpose, its channels-last kernel with ties to even; in the
        `cl_tf32` layout the copy rounds as the NCHW path does, so both
        layouts compute the same products (bench/NOTES.md, session 12)."""
        if not self.use_cl or self.cl_regions[i] is None or t.dim() not in (4, 5):
            return t
        if tf32:
            self.tf32_sites = True
        # Rounding works on the bits and would cut the autograd graph; a
        # forward that needs gradients runs the original ops anyway.
        rnd = tf32 and self.cl_tf32 and t.dtype == torch.float32 and \
            not (torch.is_grad_enabled() and t.requires_grad)
        fmt = torch.channels_last if t.dim() == 4 else torch.channels_last_3d
        if t.is_contiguous(memory_format=fmt) and not rnd:
            return t
        # The extension's tiled transpose (2x ATen's strided copy on large
        # activations); ATen's copy for autograd and anything unusual.
        if self._ext is not None and t.numel() >= (1 << 16) and \
                not (torch.is_grad_enabled() and t.requires_grad) and \
                not t.is_contiguous(memory_format=fmt):
            out = self._ext.to_channels_last(t, self._arch, rnd)
            if out is not None:
                return out
        out = t.contiguous(memory_format=fmt)
        return round_tf32(out) if rnd else out

    def conv1d(self, i, conv, x, w, b, stride, padding, dilation, transposed,
               output_padding, groups, *flags, tf32=False):
        """A 1-d convolution feeding region i: in the channels-last layout a
        2-d one over [N, C, 1, L] channels-last (3-d tensors have no such
        format), its output [N, C, L] in that layout (the region makes it
        contiguous); else the call as traced."""
        if not self.use_cl or self.cl_regions[i] is None or x.dim() != 3:
            return conv(x, w, b, stride, padding, dilation, transposed,
                        output_padding, groups, *flags)
        out = conv(self.cl(i, x.unsqueeze(2), tf32), self.cl(i, w.unsqueeze(2), tf32),
                   b, [1, *stride], [0, *padding], [1, *dilation], transposed,
                   [0, *output_padding], groups, *flags)
        return out.squeeze(2)

    def _call_cl(self, i, inputs):
        spec = self.manifest["regions"][i]["channels_last"]
        perm = spec["perm"]
        views = []
        fmt = torch.channels_last if len(perm) == 4 else torch.channels_last_3d
        if spec.get("reads_only"):
            # The kernel reads the convolution's output as [N, H, W, C] and
            # everything else, outputs included, in the usual layout.
            first = inputs[0]
            if not first.is_contiguous(memory_format=fmt):
                first = first.contiguous(memory_format=fmt)
            views = [first.permute(perm)] + [t.contiguous() for t in inputs[1:]]
            out = self.cl_regions[i].run(views)
            return None if out is None else out[:self.num_results[i]]
        for j, (t, target) in enumerate(zip(inputs, spec["inputs"])):
            if t.dim() == len(perm):
                # Full-rank operands other than the convolution's output (a
                # residual) may be NCHW: one copy, which the layout timing
                # accounts for.
                if j > 0 and not t.is_contiguous(memory_format=fmt):
                    t = t.contiguous(memory_format=fmt)
                views.append(t.permute(perm))
            else:
                padded = [1] * (len(perm) - t.dim()) + list(t.shape)
                views.append(t.reshape(padded).permute(perm).reshape(target["shape"]))
        out = self.cl_regions[i].run(views)
        if out is None:
            return None
        inverse = [perm.index(d) for d in range(len(perm))]
        return [o.permute(inverse) for o in out[:self.num_results[i]]]

    def _choose_layout(self, module, tensors):
        """Times the forward both ways (buffers restored) and keeps the faster."""
        forced = os.environ.get("KB_CHANNELS_LAST")
        if forced is not None:
            # 1: channels-last; tf32: channels-last with the inputs of TF32
            # forward convolutions rounded as cuDNN's NCHW path rounds them.
            self.use_cl = forced not in ("", "0")
            self.cl_tf32 = forced == "tf32"
            return
        times, outputs, probes = {}, {}, {}
        layouts = {"nchw": (False, False), "channels_last": (True, False),
                   "channels_last_tf32": (True, True)}
        order = ["nchw", "channels_last", "channels_last_tf32"] * 2
        self.tf32_sites = False
        with torch.no_grad(), _buffers_kept(module):
            for name in order:
                if name == "channels_last_tf32" and not self.tf32_sites:
                    continue  # no TF32 forward convolution: same as plain
                self.use_cl, self.cl_tf32 = layouts[name]
                if self.exact_sites and name not in probes:
                    self._probe = probes[name] = {}
                out = self._run(module, *tensors)  # warm-up (cuDNN plans)
                self._probe = None
                outputs[name] = [o for o in (
                    out if isinstance(out, (tuple, list)) else (out,))
                    if isinstance(o, torch.Tensor)]
                times.setdefault(name, []).append(
                    _elapsed_ms(lambda: self._run(module, *tensors)))
        self.layout_ms = {name: min(t) for name, t in times.items()}
        # cuDNN may pick another algorithm for channels-last data, and with
        # TF32 convolutions that changes results by ~1e-4: keep a layout
        # change only when the outputs stay within 1e-5 of the traced layout,
        # and, where a step or singular op reads a region's inputs, only
        # when those inputs are bit-identical (a flipped comparison on other
        # inputs would be an error of a whole unit).
        same = {name: all(_layouts_agree(a, b)
                          for a, b in zip(outputs["nchw"], outputs[name])) and
                _same_bits(probes.get("nchw", {}), probes.get(name, {}))
                for name in times if name != "nchw"}
        self.layout_ms["same_results"] = same
        candidates = [n for n in same if same[n] and
                      self.layout_ms[n] < 0.97 * self.layout_ms["nchw"]]
        chosen = min(candidates, key=self.layout_ms.get, default="nchw")
        self.layout_ms["chosen"] = chosen
        self.use_cl, self.cl_tf32 = layouts[chosen]
        _log(f"layout: {self.layout_ms} -> {chosen}")

    # ---- library epilogues -------------------------------------------------
    def const(self, i, make):
        """The value of a graph op computed from constants only (a CPU
        tensor constant moved to the GPU: transformers' masking_utils),
        made on the first call and reused: a host-to-device copy of pageable
        memory inside a CUDA graph capture invalidates the capture."""
        if i not in self.consts:
            self.consts[i] = make()
        return self.consts[i]

    def attn_mask(self, i, mask, causal):
        """SDPA's (attn_mask, is_causal) for a mask that kb-rewrite proved
        the same on every call (made from constants and guarded shapes
        only: transformers' traced masks, which eager transformers replaces
        by None, or by is_causal, outside a trace). On the first call
        outside a CUDA graph capture the runtime reads it once: all zeros
        (float; -0.0 too: x + -0.0 == x) or all True (bool) is no mask; the
        causal pattern over a square score matrix (attend where key <=
        query: 0 or True there, at most -1e30 or False elsewhere, whose
        weights softmax makes exactly 0) is is_causal. SDPA then takes the
        fused kernel eager takes instead of its math path with the mask."""
        if mask is None or not isinstance(mask, torch.Tensor):
            return mask, causal
        form = self.attn_masks.get(i)
        if form is None:
            if mask.is_cuda and torch.cuda.is_current_stream_capturing():
                return mask, causal
            with torch.no_grad():
                form = _mask_form(mask)
            self.attn_masks[i] = form
            _log(f"attention mask {i}: {form}")
        if form == "none":
            return None, causal
        if form == "causal" and not causal:
            return None, True
        return mask, causal

    def lib(self, i, lib_fn, anchor_fn, operands):
        """Region i over anchor_fn(*operands), or lib_fn: one library call
        (a cuBLASLt / cuDNN epilogue) computing the same; chosen on first use."""
        use = self.lib_choice.get(i)
        if use is None:
            use = self.lib_choice[i] = self._choose_lib(i, lib_fn, anchor_fn,
                                                        operands)
        if use:
            return lib_fn(*operands)
        return tuple(self.call(i, (anchor_fn(*operands),)))

    def _choose_lib(self, i, lib_fn, anchor_fn, operands):
        forced = os.environ.get("KB_LIBRARY_EPILOGUES")
        if forced is not None:
            self.library_ms[i] = {"chosen": "forced", "library": None}
            return forced not in ("", "0")
        if os.environ.get("KB_RUNTIME", "on") == "off" or \
                not all(t.is_cuda for t in operands if isinstance(t, torch.Tensor)) or \
                torch.cuda.is_current_stream_capturing():
            return False
        unfused = lambda: self.call(i, (anchor_fn(*operands),))[0]
        library = lambda: lib_fn(*operands)[0]
        record = self.library_ms[i] = {}
        with torch.no_grad():
            want = unfused()
            try:
                got = library()
            except (RuntimeError, TypeError) as e:
                record.update(chosen="kernel", error=str(e).splitlines()[0])
                _log(f"region {i} library form: {record['error']}")
                return False
            same = (got.shape == want.shape and got.dtype == want.dtype and
                    torch.allclose(got, want, rtol=1e-5, atol=1e-5,
                                   equal_nan=True))
            record["same_results"] = same
            if not same:
                record["chosen"] = "kernel"
                _log(f"region {i} library form differs from the kernel's")
                return False
            times = {"kernel": [], "library": []}
            for _ in range(3):
                for name, fn in (("kernel", unfused), ("library", library)):
                    times[name].append(_elapsed_ms(fn, calls=10))
        record["kernel"] = min(times["kernel"])
        record["library"] = min(times["library"])
        use = record["library"] < 0.97 * record["kernel"]
        record["chosen"] = "library" if use else "kernel"
        _log(f"region {i} library form: {record}")
        return use

    # ---- execution ----------------------------------------------------------
    def call(self, i, inputs):
        if self._probe is not None and i in self.exact_sites and \
                i not in self._probe:
            self._probe[i] = [t.clone(memory_format=torch.contiguous_format)
                              for t in inputs if isinstance(t, torch.Tensor)]
        if self.use_cl and self.cl_regions[i] is CONVERT:
            # The convolution ran channels-last; the kernel reads NCHW.
            inputs = tuple(t.contiguous() if isinstance(t, torch.Tensor) else t
                           for t in inputs)
        elif self.use_cl and self.cl_regions[i] is not None:
            out = self._call_cl(i, inputs)
            if out is not None:
                return out
        r = self.regions[i]
        if r is not None:
            try:
                out = r.run(list(inputs))
            except RuntimeError as e:
                # A launch the driver refuses (a cooperative grid that this
                # GPU cannot hold at once, on another GPU than the one that
                # verified it) leaves the context usable: the region runs
                # its ATen ops from now on.
                warnings.warn(f"kb_runtime: region {i}: {e}; running its "
                              "ATen ops instead")
                self.regions[i] = r = None
                out = None
            if out is None and r is not None and self.relaid[i]:
                out = r.run(_row_major_at(inputs, self.relaid[i]))
            if out is not None:
                return out[:self.num_results[i]]
            if r is not None and self.fallbacks[i] == 0:
                _log(f"region {i} guard failed: {r.guard(list(inputs))}")
            self.fallbacks[i] += 1
        return self.references[i](*inputs)

    def _run(self, module, *tensors):
        return self.forward_fn(module, self, *tensors)

    def _arguments_seen(self, args):
        """The call's tensor arguments as the guard compares them, beside
        the traced ones (the first fallback's warning shows both)."""
        def describe(t):
            if not isinstance(t, torch.Tensor):
                return repr(t)[:40]
            return f"{list(t.shape)} {str(t.dtype).replace('torch.', '')} {t.device.type}"
        got = ", ".join(describe(a) for a in args)
        traced = ", ".join(
            f"{s['shape']} {s['dtype']} cuda" if s["kind"] == "tensor" else repr(s.get("value"))
            for s in self.inputs)
        return f"called with ({got}); traced with ({traced})"

    def forward(self, module, args, kwargs):
        return self.forward_checked(module, args, kwargs,
                                    *self.check(module, args, kwargs))

    def forward_checked(self, module, args, kwargs, reason, key=None):
        """forward() once check() has given `reason` (None: the traced
        arguments) and `key`, for callers that read them first
        (kb_rewrite.optimize's module picks a program per argument shape by
        the reason)."""
        if reason is not None:
            if reason not in self.reasons:
                self.reasons[reason] = 0
                # Never silent: the first fallback of each kind says why,
                # once (the kernels were made for the traced arguments).
                detail = self._arguments_seen(args) if "traced" in reason else ""
                if any(isinstance(a, torch.Tensor) and not a.is_cuda for a in args):
                    advice = "the kernels run on CUDA tensors"
                elif detail:
                    advice = ("rewrite the model for these arguments to use kernels "
                              "(kb_rewrite.optimize caches one rewrite per shape)")
                else:
                    advice = "docs/rewrite.md lists the guards"
                warnings.warn(
                    f"kb_runtime: running the original forward ({reason}"
                    f"{'; ' + detail if detail else ''}); {advice}",
                    KbFallbackWarning, stacklevel=3)
                _log(f"original forward: {reason}")
            self.reasons[reason] += 1
            return self.original_forward(module, *args, **kwargs)
        tensors = [args[i] for i in self.tensor_positions]
        if self.regions is None:
            self._load()
            if any(r is not None for r in self.cl_regions):
                self._choose_layout(module, tensors)
            self._time_forward(module, args, tensors)
        if self.forward_choice == "original":
            reason = "slower than the original forward"
            self.reasons[reason] = self.reasons.get(reason, 0) + 1
            return self.original_forward(module, *args)
        if self.graphs is not None:
            if key is None:
                key = self._python_key(module, tensors)
            out = self.graphs(module, *tensors, key=key)
            if self.forward_choice == "pending":
                self._settle_forward()
            return out
        return self._run(module, *tensors)

    # ---- never slower ---------------------------------------------------------
    def _time_forward(self, module, args, tensors, runs=7):
        """Times the original and the rewritten forward (eager), buffers
        restored afterwards, interleaved so that drift hits both alike."""
        if os.environ.get("KB_FORWARD_CHECK") == "0":
            self.forward_choice = "new"
            return
        times = {"original": [], "new": []}
        ways = {"original": lambda: self.original_forward(module, *args),
                "new": lambda: self._run(module, *tensors)}
        with torch.no_grad(), _buffers_kept(module):
            for fn in ways.values():  # warm-up: cuDNN plans, library choices
                fn()
            for i in range(runs):
                for name in (("original", "new") if i % 2 == 0 else ("new", "original")):
                    times[name].append(_elapsed_ms(ways[name]))
        self.forward_ms = {"original": times["original"], "new": times["new"]}
        graph = None if self.graphs is not None else []
        self.forward_choice = forward_choice(times["original"], times["new"], graph)
        _log(f"forward: original {_median(times['original']):.4f} ms, rewritten "
             f"{_median(times['new']):.4f} ms -> {self.forward_choice}")

    def _settle_forward(self):
        g = self.graphs
        if g.timing is None and not g.disabled:
            return  # replay not measured yet
        replays = []
        if g.timing is not None and g.timing.get("use"):
            replays = g.timing["graph_runs"]
        self.forward_ms["graph"] = replays
        self.forward_choice = forward_choice(self.forward_ms["original"],
                                             self.forward_ms["new"], replays)
        _log(f"forward with CUDA graph replay: {replays} ms -> {self.forward_choice}")


class OpCall:
    """One traced call site: torch.ops.<ns>.<name> with the traced operands.

    TorchScript prints every operand positionally, but some schema
    arguments are keyword-only (gelu's `approximate`, add_'s `alpha`). On
    first use the site finds how to split its operands between positional
    and keyword arguments from the overloads' schemas (argument parsing
    fails before anything runs, so trying is safe), then reuses the split,
    and (torch 2.x) calls the overload the packet resolved to directly.
    """

    def __init__(self, ns, name):
        self.ns, self.name = ns, name
        self.packet = None
        self.split = None
        self.overload = None

    def _resolve(self, args):
        """The OpOverload the packet picks for these operands (torch 2.x;
        None where torch cannot say). Later calls go to it directly: the
        packet's own resolution of `aten::__and__` inside a CUDA graph
        capture invalidated the capture (the LLaMA decoder's causal mask;
        bench/probes/capture_and.py), `__and__.Tensor` with the same
        operands did not, and skipping the resolution saves host time on
        every call."""
        resolve = getattr(torch._C, "_jit_resolve_packet", None)
        if resolve is None:
            return None
        qualified = f"{self.ns}::{self.name}"
        try:
            overload = self._invoke(
                lambda *a, **k: resolve(qualified, *a, **k), args, self.split)
            return getattr(self.packet, overload)
        except (RuntimeError, TypeError, AttributeError):
            return None

    @staticmethod
    def _invoke(fn, args, split):
        """fn over the operands split into positional and keyword ones."""
        npos, names = split
        if not names:
            return fn(*args)
        return fn(*args[:npos], **dict(zip(names, args[npos:])))

    def _splits(self, n):
        seen = []
        for overload in self.packet.overloads():
            schema = getattr(self.packet, overload)._schema
            if len(schema.arguments) < n:
                continue
            positional = sum(not a.kwarg_only for a in schema.arguments)
            npos = min(n, positional)
            names = tuple(a.name for a in schema.arguments if a.kwarg_only)[:n - npos]
            if (npos, names) not in seen:
                seen.append((npos, names))
        return seen or [(n, ())]

    def __call__(self, *args):
        if self.split is not None:
            if self.overload is None:
                return self._invoke(self.packet, args, self.split)
            try:
                return self._invoke(self.overload, args, self.split)
            except (RuntimeError, TypeError):
                # Operands of other kinds than the first call's (a schema
                # mismatch raises before the op runs): resolve again, and
                # where that gives nothing new, leave resolution to the
                # packet, which took the first call's operands (an error of
                # the op itself is raised by it again).
                again = self._resolve(args)
                self.overload = again if again is not self.overload else None
                return self._invoke(self.overload or self.packet, args, self.split)
        self.packet = getattr(getattr(torch.ops, self.ns), self.name)
        first = None
        for split in self._splits(len(args)):
            try:
                out = self._invoke(self.packet, args, split)
            except (RuntimeError, TypeError) as e:
                first = first or e
                continue
            self.split = split
            self.overload = self._resolve(args)
            return out
        raise first
