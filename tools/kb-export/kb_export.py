#!/usr/bin/env python3
"""kb-export: trace a PyTorch model and write what kb-rewrite reads.

    kb-export model.py [-o DIR] [--name NAME] [--device cpu|cuda|meta] [--mode train|eval]
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
runs its original forward when called in the other mode. Works with torch
1.13 and 2.x.

Exit codes: 0 ok; 1 usage or I/O error; 2 the model failed to load or trace.
"""

import argparse
import importlib
import importlib.util
import inspect
import json
import os
import sys

SCHEMA_VERSION = 1
WRAPPER_PREFIX = "model."


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


def move(torch, value, device):
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(move(torch, v, device) for v in value)
    return value


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def describe_tensor(t):
    return {"shape": list(t.shape), "dtype": dtype_name(t),
            "strides": list(t.stride())}


MAX_CONSTANT_ELEMENTS = 1 << 18


def tensor_constants(graph):
    """The exact values of the graph's tensor constants (masks, position ids,
    torch.tensor(...) in forward), keyed by the value's name in the graph
    text: torch prints one-element tensors with 6 digits, up to 10 elements
    with 4 decimals and larger ones as <Tensor>. Plain JSON numbers (a
    float32 widened to a double prints exactly), never a pickle."""
    out = []
    for node in graph.nodes():
        if node.kind() != "prim::Constant" or not node.hasAttribute("value"):
            continue
        if node.kindOf("value") != "t":
            continue
        t = node.t("value").detach()
        # A constant made on the meta device has no values to record; one of
        # more than MAX_CONSTANT_ELEMENTS (a captured weight, not a mask or
        # position ids) would swell params.json and ModelNew's source:
        # rewrite then names it (register it as a parameter or buffer).
        if (t.device.type == "meta" or t.is_complex()
                or t.numel() > MAX_CONSTANT_ELEMENTS):
            continue
        t = t.cpu().contiguous()
        values = t.flatten().tolist()
        if t.is_floating_point():  # JSON has no NaN or Inf: "nan", "inf", "-inf"
            values = [v if v == v and abs(v) != float("inf") else repr(v) for v in values]
        out.append({"value": node.output().debugName(), "dtype": dtype_name(t),
                    "shape": list(t.shape), "values": values})
    return out


def jsonable(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return repr(value)


def annotate_parameter_types(torch, graph, model, prefix):
    """Gives prim::GetAttr outputs the concrete type of the tensor they read,
    so the graph text alone carries every parameter's shape."""
    create = getattr(getattr(torch._C, "TensorType", None), "create_from_tensor", None)
    if create is None:
        return
    objects = {}
    for inp in graph.inputs():
        if inp.type().kind() == "ClassType":
            objects[inp.debugName()] = model
    for node in graph.nodes():
        if node.kind() != "prim::GetAttr":
            continue
        owner = objects.get(node.inputsAt(0).debugName())
        if owner is None:
            continue
        value = getattr(owner, node.s("name"), None)
        out = node.outputsAt(0)
        if isinstance(value, torch.nn.Module):
            objects[out.debugName()] = value
        elif isinstance(value, torch.Tensor):
            try:
                out.setType(create(value))
            except Exception:  # older builds: params.json still has it
                pass


def trace(torch, model, args, device):
    """Traces with tensors only; other forward arguments become constants."""
    model = model.to(device)
    args = [move(torch, a, device) for a in args]
    tensor_pos = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
    baked = {i: a for i, a in enumerate(args) if not isinstance(a, torch.Tensor)}
    if not baked:
        traced = torch.jit.trace(model, tuple(args), check_trace=False, strict=False)
        return traced, model, "", args

    class Baked(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.model = inner

        def forward(self, *tensors):
            full, it = [], iter(tensors)
            for i in range(len(args)):
                full.append(baked[i] if i in baked else next(it))
            return self.model(*full)

    wrapper = Baked(model)
    traced = torch.jit.trace(wrapper, tuple(args[i] for i in tensor_pos),
                             check_trace=False, strict=False)
    return traced, wrapper, WRAPPER_PREFIX, args


def check_meta_trace(graph, device, source):
    """On the meta device, torch 1.13 runs some ops (convolutions) through
    Python meta kernels that the tracer records op by op: the graph then
    holds that kernel's arithmetic (shape computations and an
    `aten::to(..., device="meta")`) instead of the op, and every kernel
    verified from it would be checked against the wrong reference."""
    if device != "meta":
        return
    recorded = [n.kind() for n in graph.nodes() if "_meta_registrations" in str(n)]
    if recorded:
        ops = [k for k in recorded if k.startswith("aten::")] or recorded
        fail(2, f"tracing '{source}' on the meta device recorded the ops of a "
                f"Python meta kernel (torch._meta_registrations: {ops[0]} and "
                f"{len(recorded) - 1} more) instead of the op itself; export with "
                f"--device cpu or --device cuda")


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
    training = bool(model.training)
    try:
        with torch.no_grad():
            traced, traced_root, prefix, inputs = trace(torch, model, inputs, device)
    except Exception as exc:
        fail(2, f"tracing '{source}' on {device} failed: {type(exc).__name__}: {exc}")

    graph = traced.inlined_graph
    try:
        # torch prints a one-element tensor constant by reading its value,
        # which a constant made on the meta device does not have.
        graph_text = str(graph)
    except (NotImplementedError, RuntimeError) as exc:
        why = str(exc).split(". ")[0]
        fail(2, f"tracing '{source}' on {device}: the graph cannot be printed "
                f"({type(exc).__name__}: {why}); a tensor "
                f"constant made on the meta device has no values: export with "
                f"--device cpu or --device cuda")
    check_meta_trace(graph, device, source)
    annotate_parameter_types(torch, graph, traced_root, prefix)

    input_records = []
    for i, value in enumerate(inputs):
        rec = {"name": forward_names[i] if i < len(forward_names) else f"input{i}"}
        if isinstance(value, torch.Tensor):
            rec.update(kind="tensor", **describe_tensor(value))
        else:
            rec.update(kind="constant", value=jsonable(value))
        input_records.append(rec)

    params = {
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "source": os.path.abspath(source) if os.path.isfile(source) else source,
        "torch_version": torch.__version__,
        "device": device,
        "seed": args.seed,
        "training": training,
        "module_prefix": prefix,
        "init_inputs": jsonable(init_args),
        "inputs": input_records,
        "parameters": [dict(name=n, requires_grad=p.requires_grad, **describe_tensor(p))
                       for n, p in model.named_parameters()],
        "buffers": [dict(name=n, **describe_tensor(b)) for n, b in model.named_buffers()],
        "constants": tensor_constants(graph),
    }

    os.makedirs(args.output_dir, exist_ok=True)
    graph_path = os.path.join(args.output_dir, f"{name}.graph.txt")
    params_path = os.path.join(args.output_dir, f"{name}.params.json")
    with open(graph_path, "w") as f:
        f.write(str(graph))
    with open(params_path, "w") as f:
        json.dump(params, f, indent=2)
        f.write("\n")
    print(f"kb-export: wrote {graph_path} and {params_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
