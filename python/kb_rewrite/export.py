"""Tracing a PyTorch module into what kb-rewrite reads: the inlined
TorchScript graph (concrete shapes, dtypes, strides) and params.json
(parameters, buffers, inputs, exact tensor constants). Used in-process by
kb_rewrite.optimize and the torch.compile backend, and by the kb-export
command (tools/kb-export). Works with torch 1.13 and 2.x; imports torch only
when called.
"""

import json
import os

SCHEMA_VERSION = 1
WRAPPER_PREFIX = "model."


class ExportError(Exception):
    """The module could not be traced or its graph printed."""


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
        raise ExportError(f"tracing '{source}' on the meta device recorded the ops of a "
                f"Python meta kernel (torch._meta_registrations: {ops[0]} and "
                f"{len(recorded) - 1} more) instead of the op itself; export with "
                f"--device cpu or --device cuda")


def to_dtype(torch, model, inputs, dtype):
    """The model's floating parameters and buffers, and the floating
    tensor inputs, in `dtype` ("float16" / "bfloat16"): as `model.half()`
    and `x.half()` would leave them."""
    t = getattr(torch, dtype)
    model = model.to(t)
    def cast(v):
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            return v.to(t)
        if isinstance(v, (list, tuple)):
            return type(v)(cast(e) for e in v)
        return v
    return model, [cast(v) for v in inputs]


def export_module(model, inputs, *, name, device, seed=0, source=None,
                  init_args=(), forward_names=None, autocast=None):
    """Traces `model` on `inputs` (its current training mode is recorded)
    and returns (graph_text, params): what kb-export writes as
    <name>.graph.txt and <name>.params.json. Non-tensor inputs are baked
    into the graph as constants. `autocast` ("float16" / "bfloat16"):
    traced under torch.autocast with that dtype and cache_enabled=False, so
    that its casts appear in the graph as aten::to ops (a cached cast of a
    weight would be traced as a constant). Raises ExportError."""
    import inspect
    import torch

    if forward_names is None:
        try:
            forward_names = list(inspect.signature(model.forward).parameters)
        except (TypeError, ValueError):
            forward_names = []
    training = bool(model.training)
    import contextlib
    amp = contextlib.nullcontext()
    if autocast:
        if not hasattr(torch, "autocast"):
            raise ExportError(f"--autocast needs torch >= 1.10 (this is {torch.__version__})")
        amp = torch.autocast(device_type="cuda" if device == "cuda" else "cpu",
                             dtype=getattr(torch, autocast), cache_enabled=False)
    try:
        with torch.no_grad(), amp:
            traced, traced_root, prefix, inputs = trace(torch, model, list(inputs), device)
    except Exception as exc:
        raise ExportError(f"tracing '{source or name}' on {device} failed: "
                          f"{type(exc).__name__}: {exc}") from exc
    graph = traced.inlined_graph
    try:
        # torch prints a one-element tensor constant by reading its value,
        # which a constant made on the meta device does not have.
        graph_text = str(graph)
    except (NotImplementedError, RuntimeError) as exc:
        why = str(exc).split(". ")[0]
        raise ExportError(
            f"tracing '{source or name}' on {device}: the graph cannot be printed "
            f"({type(exc).__name__}: {why}); a tensor constant made on the meta "
            f"device has no values: export with --device cpu or --device cuda") from exc
    check_meta_trace(graph, device, source or name)
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
        "source": os.path.abspath(source) if source and os.path.isfile(source) else (source or ""),
        "torch_version": torch.__version__,
        "device": device,
        "seed": seed,
        "training": training,
        "autocast": autocast or "",
        "module_prefix": prefix,
        "init_inputs": jsonable(list(init_args)),
        "inputs": input_records,
        "parameters": [dict(name=n, requires_grad=p.requires_grad, **describe_tensor(p))
                       for n, p in model.named_parameters()],
        "buffers": [dict(name=n, **describe_tensor(b)) for n, b in model.named_buffers()],
        "constants": tensor_constants(graph),
    }
    # The annotated graph: parameter types were set after graph_text.
    return str(graph), params


def write_export(graph_text, params, output_dir, name):
    """Writes <name>.graph.txt and <name>.params.json; returns their paths."""
    os.makedirs(output_dir, exist_ok=True)
    graph_path = os.path.join(output_dir, f"{name}.graph.txt")
    params_path = os.path.join(output_dir, f"{name}.params.json")
    with open(graph_path, "w") as f:
        f.write(graph_text)
    with open(params_path, "w") as f:
        json.dump(params, f, indent=2)
        f.write("\n")
    return graph_path, params_path
