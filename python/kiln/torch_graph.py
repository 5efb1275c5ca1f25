"""A kiln.graph/1 document as a PyTorch function: each node a call of its ATen overload
(torch.ops.aten.<name>.<overload>), so PyTorch eager and torch.compile run the very graph
kiln runs (`kiln bench` reference rows).

    fn = torch_graph.build(doc, params, device)   # fn(*inputs) -> tuple of outputs
"""
import math

import torch

DTYPES = {
    "bool": torch.bool, "i8": torch.int8, "u8": torch.uint8, "i16": torch.int16,
    "i32": torch.int32, "i64": torch.int64, "f16": torch.float16, "bf16": torch.bfloat16,
    "f32": torch.float32, "f64": torch.float64, "c64": torch.complex64,
}
# The PyTorch spellings the format accepts too (docs/graph-format.md).
for _name, _dtype in list(DTYPES.items()):
    _torch_name = str(_dtype).replace("torch.", "")
    DTYPES[_torch_name] = _dtype
    DTYPES["torch." + _torch_name] = _dtype
_NUMBERS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


class GraphError(Exception):
    """The document names something PyTorch does not have (an op, a value)."""


def dtype(name):
    if name not in DTYPES:
        raise GraphError(f"unknown dtype '{name}'")
    return DTYPES[name]


# kiln's values are logically contiguous and the format drops memory_format (a clone's
# output may keep its input's strides here): a view of one is a reshape, as kiln runs it.
_AS_RESHAPE = {"aten.view.default", "aten._unsafe_view.default"}


def _overload(op):
    if op in _AS_RESHAPE:
        return torch.ops.aten.reshape.default
    parts = op.split(".")
    if len(parts) != 3 or parts[0] != "aten":
        raise GraphError(f"op '{op}' is not aten.<name>.<overload>")
    try:
        return getattr(getattr(torch.ops.aten, parts[1]), parts[2])
    except AttributeError as e:
        raise GraphError(f"PyTorch {torch.__version__} has no op '{op}'") from e


def _lookup(env, ref):
    name = ref[1:]
    if name in env:
        return env[name]
    base, _, index = name.rpartition(".")
    if base in env and index.isdigit():
        value = env[base]
        return value[int(index)] if isinstance(value, (tuple, list)) else value
    raise GraphError(f"'{ref}' names no value defined before it")


def _arg(env, a):
    if isinstance(a, str):
        if a.startswith("%"):
            return _lookup(env, a)
        if a in _NUMBERS:
            return _NUMBERS[a]
        if a in DTYPES:
            return DTYPES[a]
        return a
    if isinstance(a, list):
        return [_arg(env, x) for x in a]
    return a


def _node_call(node, device):
    fn = _overload(node["op"])
    names = [a.name for a in fn._schema.arguments]
    args, kwargs = list(node.get("args", [])), dict(node.get("kwargs", {}))
    # Creation ops make their tensors where the graph runs (the format leaves placement out).
    at = names.index("device") if "device" in names else -1

    def call(env):
        a = [_arg(env, x) for x in args]
        k = {key: _arg(env, v) for key, v in kwargs.items()}
        if 0 <= at < len(a):
            a[at] = device
        elif at >= 0:
            k["device"] = device
        return fn(*a, **k)

    return call


def build(doc, params, device):
    """doc: the parsed kiln.graph/1 JSON; params: {name: tensor} for its params (moved to
    `device`). Returns fn(*inputs) -> tuple of the graph's outputs."""
    if doc.get("format") != "kiln.graph/1":
        raise GraphError("not a kiln.graph/1 document")
    input_names = [i["name"] for i in doc.get("inputs", [])]
    missing = [p["name"] for p in doc.get("params", []) if p["name"] not in params]
    if missing:
        raise GraphError(f"no weights for params {', '.join(missing)}")
    constants = {p["name"]: params[p["name"]].to(device) for p in doc.get("params", [])}
    steps = [(node["name"], _node_call(node, device)) for node in doc["nodes"]]
    outputs = doc["outputs"]

    def run(*inputs):
        env = dict(constants)
        env.update(zip(input_names, inputs))
        for name, call in steps:
            env[name] = call(env)
        return tuple(_lookup(env, ref) for ref in outputs)

    return run


def make_inputs(doc, values, device):
    """The graph's inputs on `device` from {name: contiguous tensor}, laid out with each
    input's `strides` where the document gives them."""
    out = []
    for spec in doc.get("inputs", []):
        if spec["name"] not in values:
            raise GraphError(f"no value for input '{spec['name']}'")
        value = values[spec["name"]].to(device)
        if "strides" in spec:
            strided = torch.empty_strided(spec["shape"], spec["strides"], dtype=value.dtype,
                                          device=device)
            strided.copy_(value)
            value = strided
        out.append(value)
    return out
