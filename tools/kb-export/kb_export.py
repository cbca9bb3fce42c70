#!/usr/bin/env python3
"""kb-export: trace a PyTorch model and write what kb-rewrite reads.

    kb-export model.py [-o DIR] [--name NAME] [--device cpu|cuda|meta] [--mode train|eval]
              [--dtype float16|bfloat16] [--autocast float16|bfloat16]
    kb-export package.module:factory --input 1,3,224,224 [--input 8:int64] ...

A file is KernelBench-style: `class Model(nn.Module)`, `get_inputs()` and
`get_init_inputs()`. A `module:callable` names a factory (or class) that
returns an nn.Module; `--input` gives example tensors as "d0,d1,...[:dtype]".

Writes <name>.graph.txt (the inlined traced graph: concrete shapes, dtypes,
strides, devices) and <name>.params.json (parameters, buffers, inputs; non-
tensor forward arguments are recorded and baked into the graph as constants).
The model is built after torch.manual_seed(seed) and traced in the mode
--mode names, by default the module's own (`training` as constructed: a new
nn.Module trains, as KernelBench evaluates it; a factory may return one in
eval mode). In eval mode batch norms use their running statistics (a
per-channel affine map kb-rewrite fuses into its region) and dropout is the
identity. params.json records the mode ("training"); the rewritten model
runs its original forward when called in the other mode. --dtype converts
the model and its floating inputs first (as model.half() would); --autocast
traces under torch.autocast (cache_enabled=False), so the graph carries its
casts between 16-bit convolutions and matmuls and float32 ops. Works with
torch 1.13 and 2.x.

Exit codes: 0 ok; 1 usage or I/O error; 2 the model failed to load or trace.
"""

import argparse
import importlib
import importlib.util
import inspect
import json
import os
import sys


def _package_dir():
    """python/ of the source tree, or where CMake installed the package."""
    here = os.path.dirname(os.path.realpath(__file__))
    for rel in (("..", "..", "python"), ("..", "lib", "kb-rewrite", "python")):
        d = os.path.normpath(os.path.join(here, *rel))
        if os.path.isfile(os.path.join(d, "kb_rewrite", "export.py")):
            return d
    return None


if _package_dir():
    sys.path.insert(0, _package_dir())
from kb_rewrite.export import ExportError, export_module, to_dtype, write_export  # noqa: E402


def fail(code, msg):
    print(f"kb-export: error: {msg}", file=sys.stderr)
    sys.exit(code)


def load_file_module(path):
    spec = importlib.util.spec_from_file_location(
        os.path.splitext(os.path.basename(path))[0].replace("-", "_"), path)
    if spec is None or spec.loader is None:
        fail(1, f"cannot load '{path}' as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def parse_input_spec(torch, text):
    shape_text, _, dtype_text = text.partition(":")
    try:
        shape = [int(d) for d in shape_text.split(",") if d.strip()]
    except ValueError:
        fail(1, f"--input '{text}': expected sizes like 1,3,224,224[:dtype]")
    dtype = getattr(torch, dtype_text or "float32", None)
    if not isinstance(dtype, torch.dtype):
        fail(1, f"--input '{text}': unknown dtype '{dtype_text}'")
    if dtype.is_floating_point:
        return torch.randn(*shape, dtype=dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape).bool()
    return torch.randint(0, 10, shape, dtype=dtype)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="kb-export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", help="model.py (KernelBench layout) or module:callable")
    parser.add_argument("-o", "--output-dir", default=".")
    parser.add_argument("--name", help="output stem (default: the file or callable name)")
    parser.add_argument("--input", action="append", default=[],
                        help="example input for module:callable, 'd0,d1,...[:dtype]'")
    parser.add_argument("--device", default="auto", help="cpu, cuda, meta or auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mode", choices=("train", "eval"),
                        help="trace in training or inference mode (default: "
                             "the module's own mode as constructed)")
    parser.add_argument("--dtype", choices=("float32", "float16", "bfloat16"),
                        help="the model's parameters and floating inputs in this "
                             "type before tracing (model.half() / .bfloat16())")
    parser.add_argument("--autocast", choices=("float16", "bfloat16"),
                        help="trace under torch.autocast with this dtype "
                             "(cache_enabled=False: its casts become graph ops)")
    args = parser.parse_args(argv)

    try:
        import torch
    except ImportError:
        fail(1, f"torch is not importable by {sys.executable}; "
                "pass --python with an interpreter that has torch")

    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"

    torch.manual_seed(args.seed)
    source = args.source
    try:
        if source.endswith(".py") or os.path.isfile(source):
            if not os.path.isfile(source):
                fail(1, f"no such file '{source}'")
            mod = load_file_module(source)
            for needed in ("Model", "get_inputs", "get_init_inputs"):
                if not hasattr(mod, needed):
                    fail(2, f"{source}: no '{needed}' (KernelBench layout needs "
                            "Model, get_inputs and get_init_inputs)")
            init_args = list(mod.get_init_inputs())
            torch.manual_seed(args.seed)
            model = mod.Model(*init_args)
            torch.manual_seed(args.seed + 1)
            # Drawn on the tracing device where torch can (>= 2.0): only
            # shapes and dtypes are exported, and an 8 GB input drawn on the
            # CPU and copied over takes longer than the trace.
            if device == "cuda" and hasattr(torch.device(device), "__enter__"):
                with torch.device(device):
                    inputs = list(mod.get_inputs())
            else:
                inputs = list(mod.get_inputs())
            name = args.name or os.path.splitext(os.path.basename(source))[0]
            forward_names = list(inspect.signature(model.forward).parameters)
        else:
            module_name, _, attr = source.partition(":")
            if not attr:
                fail(1, f"'{source}' is neither a .py file nor module:callable")
            if not args.input:
                fail(1, "module:callable needs at least one --input")
            factory = getattr(importlib.import_module(module_name), attr)
            init_args = []
            torch.manual_seed(args.seed)
            model = factory()
            torch.manual_seed(args.seed + 1)
            inputs = [parse_input_spec(torch, spec) for spec in args.input]
            name = args.name or attr
            forward_names = list(inspect.signature(model.forward).parameters)
    except SystemExit:
        raise
    except Exception as exc:  # the user's model code failed
        fail(2, f"loading '{source}' failed: {type(exc).__name__}: {exc}")

    if args.mode is not None:
        model.train(args.mode == "train")
    if args.dtype and args.dtype != "float32":
        model, inputs = to_dtype(torch, model, inputs, args.dtype)
    try:
        graph_text, params = export_module(
            model, inputs, name=name, device=device, seed=args.seed,
            source=source, init_args=init_args, forward_names=forward_names,
            autocast=args.autocast)
    except ExportError as exc:
        fail(2, str(exc))
    graph_path, params_path = write_export(graph_text, params, args.output_dir, name)
    print(f"kb-export: wrote {graph_path} and {params_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
