"""A kiln.graph/1 document as a PyTorch function: each node a call of its ATen overload
(torch.ops.aten.<name>.<overload>), so PyTorch eager and torch.compile run the very graph
kiln runs (`kiln bench` reference rows).

    g = torch_graph.build(doc, params, device)   # g(*inputs) -> tuple of outputs
    torch.compile(g.fn)(*g.params, *inputs)      # the same, compiled
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


class _Source:
    """Straight-line Python for a graph: one local per value, one call per node, literals
    written out. torch.compile then guards the function's tensor arguments only, as it does a
    module's forward; a closure walking the document would make Dynamo guard every literal of
    it and add ~100 us to each call."""

    def __init__(self, device):
        self.names = {}
        self.namespace = {"inf": math.inf, "nan": math.nan, "torch": torch,
                          "_device": torch.device(device)}

    def define(self, name):
        self.names[name] = f"v{len(self.names)}"
        return self.names[name]

    def ref(self, text):
        name = text[1:]
        if name in self.names:
            return self.names[name]
        base, _, index = name.rpartition(".")
        if base in self.names and index.isdigit():
            return f"{self.names[base]}[{index}]"
        raise GraphError(f"'{text}' names no value defined before it")

    def literal(self, a):
        if isinstance(a, str):
            if a.startswith("%"):
                return self.ref(a)
            if a in _NUMBERS:
                return a  # inf, -inf and nan are names in the namespace
            return repr(DTYPES[a]) if a in DTYPES else repr(a)
        if isinstance(a, list):
            return "[" + ", ".join(self.literal(x) for x in a) + "]"
        if isinstance(a, float) and not math.isfinite(a):
            return repr(a)  # 'inf', '-inf', 'nan': names again
        return repr(a)

    def call(self, k, node):
        fn = _overload(node["op"])
        self.namespace[f"op{k}"] = fn
        names = [a.name for a in fn._schema.arguments]
        args = [self.literal(a) for a in node.get("args", [])]
        kwargs = {key: self.literal(v) for key, v in node.get("kwargs", {}).items()}
        # Creation ops make their tensors where the graph runs (the format leaves placement
        # out).
        at = names.index("device") if "device" in names else -1
        if 0 <= at < len(args):
            args[at] = "_device"
        elif at >= 0:
            kwargs["device"] = "_device"
        return f"op{k}({', '.join(args + [f'{key}={v}' for key, v in kwargs.items()])})"


class TorchGraph:
    """`fn(*params, *inputs)` returns the graph's outputs as a tuple; `params` are the
    weights on the device in that order; `source` is fn's text. Calling the object runs
    fn with its params."""

    def __init__(self, fn, params, source):
        self.fn, self.params, self.source = fn, params, source

    def __call__(self, *inputs):
        return self.fn(*self.params, *inputs)


def build(doc, params, device):
    """doc: the parsed kiln.graph/1 JSON; params: {name: tensor} for its params (moved to
    `device`)."""
    if doc.get("format") != "kiln.graph/1":
        raise GraphError("not a kiln.graph/1 document")
    param_names = [p["name"] for p in doc.get("params", [])]
    missing = [n for n in param_names if n not in params]
    if missing:
        raise GraphError(f"no weights for params {', '.join(missing)}")
    src = _Source(device)
    arguments = [src.define(n) for n in param_names + [i["name"] for i in doc.get("inputs", [])]]
    lines = [f"def graph({', '.join(arguments)}):"]
    for k, node in enumerate(doc["nodes"]):
        call = src.call(k, node)  # before defining the node: it may not read itself
        lines.append(f"    {src.define(node['name'])} = {call}")
    lines.append(f"    return ({''.join(src.ref(o) + ', ' for o in doc['outputs'])})")
    text = "\n".join(lines) + "\n"
    exec(compile(text, f"<kiln graph {doc.get('name', '')}>", "exec"), src.namespace)
    return TorchGraph(src.namespace["graph"], [params[n].to(device) for n in param_names], text)


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
