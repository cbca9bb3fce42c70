"""kb_rewrite.optimize, save and load.

optimize() traces a built module in-process (kb_rewrite.export), runs
`kb-rewrite rewrite` on the graph, and wraps the module with the rewritten
package's graph program (kb_program.py). Packages are cached under
$KB_CACHE_DIR/models (default ~/.cache/kb-rewrite/models) by a hash of the
graph, its parameters' description, the options and the kb-rewrite binary,
so a second call in a new process only loads the package.
"""

import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import time

from .export import WRAPPER_PREFIX, export_module, write_export
from .tools import KbRewriteError, binary_identity, find_binary, run_kb_rewrite

SAVED_FORMAT = 1


def cache_root(cache_dir=None):
    base = cache_dir or os.environ.get("KB_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "kb-rewrite")
    return os.path.join(base, "models")


def _say(quiet, text):
    if not quiet:
        print(f"kb_rewrite: {text}", file=sys.stderr, flush=True)


def _device_of(torch, model, inputs):
    for t in list(inputs) + list(model.parameters()):
        if isinstance(t, torch.Tensor):
            return "cuda" if t.is_cuda else "cpu"
    return "cpu"


def _load_program(package, key):
    name = "kb_program_" + key
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, os.path.join(package, "kb_program.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _region_counts(package):
    try:
        with open(os.path.join(package, "report.json")) as f:
            report = json.load(f)
    except (OSError, ValueError):
        return {}
    counts = {}
    for r in report.get("regions", []):
        counts[r.get("status", "?")] = counts.get(r.get("status", "?"), 0) + 1
    return counts


def _rewrite_args(fast_math, verify, model_url, model_name, strategy, samples, extra_args):
    args = ["--verify", verify]
    if fast_math:
        args.append("--fast-math")
    if model_url:
        args += ["--model-url", model_url]
    if model_name:
        args += ["--model", model_name]
    if strategy:
        args += ["--strategy", strategy]
    if samples and samples != 1:
        args += ["--samples", str(samples)]
    return args + list(extra_args)


def _build_package(graph_text, params, name, key, root, rewrite_args, quiet):
    """kb-rewrite rewrite into a scratch directory, renamed into the cache
    whole (a concurrent call for the same key keeps the first)."""
    os.makedirs(root, exist_ok=True)
    package = os.path.join(root, key)
    scratch = tempfile.mkdtemp(prefix=key + ".", dir=root)
    try:
        graph_path, params_path = write_export(graph_text, params,
                                               os.path.join(scratch, "export"), name)
        out = os.path.join(scratch, "package")
        run_kb_rewrite(["rewrite", graph_path, "--params", params_path, "-o", out]
                       + rewrite_args + (["--quiet"] if quiet else []), quiet=quiet)
        if not os.path.isfile(os.path.join(out, "kb_program.py")):
            raise KbRewriteError(f"kb-rewrite wrote no kb_program.py in {out}")
        shutil.copy(graph_path, os.path.join(out, "graph.txt"))
        try:
            os.rename(out, package)
        except OSError:
            if not os.path.isfile(os.path.join(package, "kb_program.py")):
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return package


def _autocast_dtype(torch, device):
    """The dtype name ("float16", "bfloat16") of an enabled torch.autocast
    for `device`, else None."""
    kind = "cuda" if device.startswith("cuda") else "cpu"
    try:
        if not torch.is_autocast_enabled(kind):
            return None
        dtype = torch.get_autocast_dtype(kind)
    except TypeError:  # torch < 2.4: per-device functions
        if kind == "cuda":
            if not torch.is_autocast_enabled():
                return None
            dtype = torch.get_autocast_gpu_dtype()
        else:
            if not torch.is_autocast_cpu_enabled():
                return None
            dtype = torch.get_autocast_cpu_dtype()
    except AttributeError:
        return None
    return str(dtype).replace("torch.", "")


def optimize(model, example_inputs, *, mode=None, fast_math=False, model_url=None,
             model_name=None, strategy=None, samples=1, verify="auto", cache_dir=None,
             quiet=False, name=None, extra_args=(), respecialize=8):
    """`model` with each fused region of its forward running a verified
    kernel: an OptimizedModule (a torch.nn.Module) that runs the original
    forward wherever the traced one does not apply (other shapes, dtypes or
    devices, the other training mode, autograd needing gradients).

    example_inputs: a tensor or a sequence of forward arguments (non-tensor
    ones are baked in as constants). mode: "train" or "eval" to switch the
    module first; by default its current mode is traced. fast_math, model_url,
    model_name, strategy, samples: as `kb-rewrite rewrite`'s options
    (docs/cli.md); verify: "auto", "on" or "off". respecialize: how many
    other argument shapes (CUDA tensors) the module may be rewritten for
    when called with them, like dynamo's recompiles (each cached by graph
    hash; 0: the original forward for every other shape). Raises
    KbRewriteError with kb-rewrite's message when the graph cannot be
    rewritten."""
    import torch

    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    inputs = list(example_inputs)
    if mode is not None:
        if mode not in ("train", "eval"):
            raise ValueError(f"mode must be 'train' or 'eval', not {mode!r}")
        model.train(mode == "train")
    name = name or type(model).__name__
    device = _device_of(torch, model, inputs)
    stats = {"device": device}
    t0 = time.perf_counter()
    # Called under torch.autocast: traced under it too (its casts become
    # graph ops, rewritten with the rest); the cache key holds its dtype.
    amp = _autocast_dtype(torch, device)
    stats["autocast"] = amp
    _say(quiet, f"tracing {name} on {device} ({'train' if model.training else 'eval'} mode"
                f"{', autocast ' + amp if amp else ''})")
    graph_text, params = export_module(model, inputs, name=name, device=device,
                                       autocast=amp)
    stats["export_s"] = time.perf_counter() - t0

    exe = find_binary("kb-rewrite", "KB_REWRITE")
    rewrite_args = _rewrite_args(fast_math, verify, model_url, model_name, strategy,
                                 samples, extra_args)
    keyed = dict(params, source="", torch_version=torch.__version__)
    # TorchScript mangles the class names of a module traced again in the
    # same process (`___torch_mangle_7.Model`): the same graph, so the same
    # key (a second optimize() in one process was no cache hit, run75).
    h = hashlib.sha256()
    for part in (_unmangled(graph_text), json.dumps(keyed, sort_keys=True),
                 json.dumps(rewrite_args),
                 binary_identity(exe), str(SAVED_FORMAT)):
        h.update(part.encode())
        h.update(b"\0")
    key = h.hexdigest()[:24]
    root = cache_root(cache_dir)
    package = os.path.join(root, key)
    t1 = time.perf_counter()
    stats["cached"] = os.path.isfile(os.path.join(package, "kb_program.py"))
    if stats["cached"]:
        _say(quiet, f"using the cached rewrite {package}")
    else:
        _say(quiet, f"rewriting ({exe} rewrite ...)")
        package = _build_package(graph_text, params, name, key, root, rewrite_args, quiet)
    stats["rewrite_s"] = time.perf_counter() - t1
    stats["package"] = package
    stats["regions"] = _region_counts(package)
    program = _load_program(package, key)
    prefixed = params.get("module_prefix") == WRAPPER_PREFIX
    optimized = _module_class()(model, program, package, key, prefixed, stats, quiet)
    optimized._kb_options = dict(
        fast_math=fast_math, model_url=model_url, model_name=model_name,
        strategy=strategy, samples=samples, verify=verify, cache_dir=cache_dir,
        quiet=quiet, name=name, extra_args=tuple(extra_args))
    optimized._kb_limit = respecialize
    verified = stats["regions"].get("verified", 0)
    total = sum(stats["regions"].values())
    _say(quiet, f"{verified} of {total} regions verified; package {package}")
    if device != "cuda":
        _say(quiet, "the example inputs are not on a GPU: the model runs its "
                    "original forward on them (kernels need CUDA tensors)")
    return optimized


def _unmangled(graph_text):
    return re.sub(r"___torch_mangle_\d+\.", "", graph_text)


def _traced_autocast(package):
    """The autocast dtype the package's graph was traced under (its
    params.json), or None."""
    try:
        with open(os.path.join(package, "params.json")) as f:
            return json.load(f).get("autocast") or None
    except (OSError, ValueError):
        return None


def _define_module():
    import torch

    class _Baked(torch.nn.Module):
        """The module kb-export traced when non-tensor arguments were baked
        in: the graph program reads parameters as self.model.<path>."""

        def __init__(self, inner):
            super().__init__()
            self.model = inner

    class OptimizedModule(torch.nn.Module):
        """The original module (as `_orig_mod`, like torch.compile's wrapper;
        state_dict keys carry that prefix) with a fused forward.
        `kb_stats` holds the export and rewrite times, whether the package
        came from the cache, region statuses, and after the first call its
        time and the extra GPU memory it allocated."""

        def __init__(self, model, program_module, package, key, prefixed, stats, quiet):
            super().__init__()
            self._orig_mod = model
            object.__setattr__(self, "_kb_package", package)
            object.__setattr__(self, "_kb_key", key)
            object.__setattr__(self, "_kb_quiet", quiet)
            object.__setattr__(self, "kb_stats", stats)
            object.__setattr__(self, "_kb_holder", _Baked(model) if prefixed else None)
            object.__setattr__(self, "_kb_amp", _traced_autocast(package))
            if prefixed:
                original = lambda holder, *a, **k: holder.model(*a, **k)  # noqa: E731
            else:
                original = lambda m, *a, **k: m(*a, **k)  # noqa: E731
            object.__setattr__(self, "_kb", program_module.make_program(original))
            # Other argument shapes: signature -> (program, holder) or None
            # (no kernels for it: rewriting failed or the limit was met).
            object.__setattr__(self, "_kb_shapes", {})
            object.__setattr__(self, "_kb_options", None)
            object.__setattr__(self, "_kb_limit", 0)
            self.train(model.training)

        @staticmethod
        def _signature(args):
            import torch
            sig = tuple((tuple(a.shape), str(a.dtype), a.device.type)
                        if isinstance(a, torch.Tensor) else ("value", repr(a))
                        for a in args)
            # The autocast state is part of what was traced (its casts).
            return sig + (("autocast", _autocast_dtype(torch, "cuda")),)

        def _autocast_changed(self, args):
            """A reason when autocast on CUDA is not as it was traced (the
            program holds the traced casts): rewritten for the call's state
            as for other shapes; None when it is the same."""
            import torch
            # Every call: the autocast check first (the argument walk of
            # _on_gpu covers all of a dynamo graph's parameters).
            now = _autocast_dtype(torch, "cuda")
            if now == self._kb_amp or not self._on_gpu(args):
                return None
            return (f"autocast {now or 'off'} differs from the traced "
                    f"({self._kb_amp or 'off'})")

        @staticmethod
        def _on_gpu(args):
            import torch
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            return bool(tensors) and all(t.is_cuda for t in tensors)

        def _specialised(self, args, kwargs, reason):
            """The program for arguments the traced one's guard refuses with
            `reason`, made by rewriting the module for them (once per
            signature, cached); None to run the original forward."""
            if (kwargs or not self._kb_limit or self._kb_options is None
                    or "traced" not in reason or not self._on_gpu(args)):
                return None
            sig = self._signature(args)
            if sig in self._kb_shapes:
                return self._kb_shapes[sig]
            entry = None
            if len(self._kb_shapes) < self._kb_limit:
                _say(self._kb_quiet, f"rewriting for new arguments ({reason})")
                try:
                    other = optimize(self._orig_mod, list(args), respecialize=0,
                                     **self._kb_options)
                    entry = (other._kb, other._kb_holder)
                    self.kb_stats.setdefault("specialisations", []).append(
                        {"signature": repr(sig), "package": other.kb_stats["package"],
                         "cached": other.kb_stats["cached"],
                         "rewrite_s": other.kb_stats["rewrite_s"]})
                except KbRewriteError as exc:
                    _say(self._kb_quiet, f"no kernels for these arguments: {exc}")
            else:
                _say(self._kb_quiet, f"{self._kb_limit} argument shapes rewritten "
                                     f"already: the original forward for {sig}")
            self._kb_shapes[sig] = entry
            return entry

        def _target(self, holder=None):
            holder = holder if holder is not None else self._kb_holder
            if holder is not None:
                holder.training = self._orig_mod.training
                return holder
            return self._orig_mod

        def forward(self, *args, **kwargs):
            target = self._target()
            # The guard runs once a call; only a refusal looks further.
            reason, key = self._kb.check(target, args, kwargs)
            if reason is None:
                reason = self._autocast_changed(args)
            if reason is not None:
                special = self._specialised(args, kwargs, reason)
                if special is not None:
                    program, holder = special
                    return program.forward(self._target(holder), args, kwargs)
            if "first_call_s" in self.kb_stats:
                return self._kb.forward_checked(target, args, kwargs, reason, key)
            import torch
            cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
            before = torch.cuda.memory_allocated() if cuda else 0
            t0 = time.perf_counter()
            out = self._kb.forward_checked(target, args, kwargs, reason, key)
            if cuda:
                torch.cuda.synchronize()
            self.kb_stats["first_call_s"] = time.perf_counter() - t0
            if cuda:
                self.kb_stats["extra_gpu_bytes"] = max(torch.cuda.memory_allocated() - before, 0)
            reasons = dict(self._kb.reasons)
            self.kb_stats["fallbacks"] = reasons
            _say(self._kb_quiet, "first call {:.2f} s{}{}".format(
                self.kb_stats["first_call_s"],
                ", {:.1f} MB more GPU memory".format(self.kb_stats["extra_gpu_bytes"] / 1e6)
                if "extra_gpu_bytes" in self.kb_stats else "",
                "; original forward: " + ", ".join(reasons) if reasons else ""))
            return out

    return OptimizedModule


def __getattr__(name):  # OptimizedModule needs torch: defined on first use
    if name == "OptimizedModule":
        return _module_class()
    raise AttributeError(name)


_MODULE_CLASS = None


def _module_class():
    global _MODULE_CLASS
    if _MODULE_CLASS is None:
        _MODULE_CLASS = _define_module()
    return _MODULE_CLASS


def save(optimized, directory):
    """Writes `optimized`'s rewritten package and its module's state_dict
    (torch.save of tensors only) into `directory`; load(directory, model)
    restores it onto a module built the same way. No code is pickled."""
    import torch

    os.makedirs(directory, exist_ok=True)
    dest = os.path.join(directory, "package")
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(optimized._kb_package, dest)
    model = optimized._orig_mod
    torch.save(model.state_dict(), os.path.join(directory, "state_dict.pt"))
    meta = {"format": SAVED_FORMAT, "key": optimized._kb_key,
            "class": f"{type(model).__module__}.{type(model).__qualname__}",
            "training": model.training,
            "prefixed": optimized._kb_holder is not None}
    with open(os.path.join(directory, "kb_saved.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def load(directory, model, *, quiet=False):
    """`model` (built as the saved one was: same class and constructor
    arguments) with the state_dict and rewritten package save() wrote.
    The state_dict is read with weights_only=True (tensors, never code)."""
    import torch

    with open(os.path.join(directory, "kb_saved.json")) as f:
        meta = json.load(f)
    if meta.get("format") != SAVED_FORMAT:
        raise KbRewriteError(f"{directory}: saved with format {meta.get('format')}, "
                             f"this kb_rewrite reads {SAVED_FORMAT}")
    cls = f"{type(model).__module__}.{type(model).__qualname__}"
    if cls != meta["class"]:
        raise KbRewriteError(f"{directory} holds a {meta['class']}, not a {cls}")
    state = torch.load(os.path.join(directory, "state_dict.pt"), map_location="cpu",
                       weights_only=True)
    model.load_state_dict(state)
    model.train(meta["training"])
    package = os.path.join(directory, "package")
    program = _load_program(package, meta["key"])
    stats = {"cached": True, "package": package, "regions": _region_counts(package)}
    return _module_class()(model, program, package, meta["key"], meta["prefixed"],
                           stats, quiet)
