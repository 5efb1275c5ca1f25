"""An FX graph of ATen ops (from torch.export or AOTAutograd) as a kiln.graph/1 document.

Raises Unsupported, naming the node and op, for what kiln.graph/1 cannot hold: symbolic
(dynamic) shapes, non-ATen calls, Python values of unknown kinds.
"""
import hashlib
import json
import math
import operator

import torch

from . import fused_attention

KILN_DTYPES = {
    torch.bool: "bool", torch.int8: "i8", torch.uint8: "u8", torch.int16: "i16",
    torch.int32: "i32", torch.int64: "i64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.float32: "f32", torch.float64: "f64", torch.complex64: "c64",
}
# Checks torch.export leaves in a graph; they compute nothing kiln needs.
_ASSERTIONS = {"_assert_tensor_metadata", "_assert_async", "_assert_scalar",
               "sym_constrain_range", "sym_constrain_range_for_size"}
# Placement and layout are the runtime's: such arguments are dropped.
_IGNORED_TYPES = (torch.device, torch.layout, torch.memory_format)


class Unsupported(Exception):
    """The graph holds something kiln cannot express; `op` names the ATen op when one is to
    blame."""

    def __init__(self, message, op=None):
        super().__init__(message)
        self.op = op


def _tensor_spec(name, t, where):
    if t.dtype not in KILN_DTYPES:
        raise Unsupported(f"{where}: dtype {t.dtype} is not one kiln runs")
    shape = list(t.shape)
    if any(not isinstance(s, int) for s in shape) or any(not isinstance(s, int) for s in t.stride()):
        raise Unsupported(f"{where}: dynamic shape {tuple(t.shape)} (kiln compiles static shapes)")
    spec = {"name": name, "dtype": KILN_DTYPES[t.dtype], "shape": shape}
    if not t.is_contiguous() and t.numel() > 1:
        spec["strides"] = list(t.stride())
    return spec


class ComplexSlot(int):
    """An output slot whose kiln output holds complex values as f32 pairs (a last dim of 2)."""


class PermutedSlot(int):
    """An output slot whose traced tensor is a dense permutation of a row-major layout (a
    transposed weight saved for the backward): kiln returns it in memory order, row-major,
    and the caller views it back through `dims`, so it has the strides the trace gave it and
    the graph that reads it next gets the layout it was compiled for."""

    def __new__(cls, index, dims):
        slot = super().__new__(cls, index)
        slot.dims = dims
        return slot


def _memory_order(t):
    """The dims of `t` from outermost to innermost in memory where its strides are a
    permutation of a dense row-major layout other than its own, else None."""
    if t.is_contiguous() or t.numel() <= 1:
        return None
    order = sorted(range(t.dim()), key=lambda d: (-t.stride(d), d))
    step = 1
    for d in reversed(order):
        if t.shape[d] != 1 and t.stride(d) != step:
            return None
        step *= t.shape[d]
    return order


# Complex tensors cross into kiln as f32 pairs (torch.view_as_real: the same memory) and
# become complex inside the graph through view_as_complex; kiln lowers them to pairs again.
def _pairs_name(name):
    return name + "_pairs"


def _as_pairs(t):
    return torch.view_as_real(t) if t.is_complex() else t


def _complex_from_pairs(name):
    return {"name": name, "op": "aten.view_as_complex.default", "args": ["%" + _pairs_name(name)]}


def _number(v):
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


class _Converter:
    def __init__(self, gm):
        self.gm = gm
        self.refs = {}  # fx node -> "%name" or "%name.K"

    def arg(self, a, where):
        if isinstance(a, torch.fx.Node):
            if a not in self.refs:
                raise Unsupported(f"{where}: refers to '{a.name}', which is not a tensor kiln holds")
            return self.refs[a]
        if isinstance(a, (list, tuple)):
            return [self.arg(x, where) for x in a]
        if a is None or isinstance(a, (bool, str)):
            return a
        if isinstance(a, int):
            return a
        if isinstance(a, float):
            return _number(a)
        if isinstance(a, torch.dtype):
            if a not in KILN_DTYPES:
                raise Unsupported(f"{where}: dtype {a} is not one kiln runs")
            return KILN_DTYPES[a]
        if isinstance(a, _IGNORED_TYPES):
            return None
        if isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            raise Unsupported(f"{where}: symbolic value {a} (kiln compiles static shapes)")
        raise Unsupported(f"{where}: argument {a!r} of type {type(a).__name__}")


def convert(gm, placeholder_tensors, params=None, name=None, memory_order_outputs=False):
    """Returns (graph dict, weights {name: tensor}, outputs) where outputs lists, for each of
    the FX graph's outputs, its index among the kiln graph's outputs or None where the FX
    graph returns None.

    `placeholder_tensors` gives a tensor (real or fake) per placeholder for its type;
    `params` maps placeholder names to weights, which become the graph's parameters. With
    `memory_order_outputs`, an output traced as a dense permutation of a row-major layout
    leaves kiln in memory order and its slot (a PermutedSlot) says how to view it back."""
    params = params or {}
    c = _Converter(gm)
    inputs, param_specs, weights, nodes = [], [], {}, []
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(placeholder_tensors):
        raise Unsupported(f"{len(placeholders)} placeholders but {len(placeholder_tensors)} example inputs")
    for n, t in zip(placeholders, placeholder_tensors):
        if not isinstance(t, torch.Tensor):
            raise Unsupported(f"input '{n.name}' is a {type(t).__name__}: a dynamic shape "
                              "(kiln compiles static shapes)")
        value_name = _pairs_name(n.name) if t.is_complex() else n.name
        spec = _tensor_spec(value_name, _as_pairs(t), f"input '{n.name}'")
        if n.name in params:
            spec.pop("strides", None)
            param_specs.append(spec)
            weights[value_name] = _as_pairs(params[n.name])
        else:
            inputs.append(spec)
        c.refs[n] = "%" + n.name
        if t.is_complex():
            nodes.append(_complex_from_pairs(n.name))
    outputs = None
    attentions = set()  # fused attention nodes taken as kiln's sdpa
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            continue
        if n.op == "get_attr":
            value = getattr(gm, n.target)
            if not isinstance(value, torch.Tensor):
                raise Unsupported(f"node '{n.name}': attribute {n.target} is not a tensor")
            value_name = _pairs_name(n.name) if value.is_complex() else n.name
            param_specs.append(_tensor_spec(value_name, _as_pairs(value), f"constant '{n.name}'"))
            weights[value_name] = _as_pairs(value.detach())
            c.refs[n] = "%" + n.name
            if value.is_complex():
                nodes.append(_complex_from_pairs(n.name))
            continue
        if n.op == "output":
            outputs = n.args[0]
            continue
        if n.op != "call_function":
            raise Unsupported(f"node '{n.name}': {n.op} is not an ATen call")
        if n.target is operator.getitem:
            source, index = n.args
            if source not in c.refs or not c.refs[source].startswith("%"):
                raise Unsupported(f"node '{n.name}': getitem of a value kiln does not hold")
            # A fused attention's output 0 is the one output of kiln's attention.
            c.refs[n] = c.refs[source] if source in attentions else f"{c.refs[source]}.{index}"
            continue
        sdpa = fused_attention.as_sdpa(n)
        if sdpa is not None:
            where = f"node '{n.name}' ({n.target})"
            node = {"name": n.name, "op": fused_attention.SDPA, "args": c.arg(sdpa[0], where)}
            if sdpa[1]:
                node["kwargs"] = {k: c.arg(v, where) for k, v in sdpa[1].items()}
            nodes.append(node)
            c.refs[n] = "%" + n.name
            attentions.add(n)
            continue
        if not isinstance(n.target, torch._ops.OpOverload) or n.target.namespace != "aten":
            raise Unsupported(f"node '{n.name}': {n.target} is not an ATen op", op=str(n.target))
        if n.target._schema.name.split("::")[-1] in _ASSERTIONS:
            continue
        op = str(n.target)
        where = f"node '{n.name}' ({op})"
        args = c.arg(list(n.args), where)
        schema_args = n.target._schema.arguments
        number = args and (isinstance(args[0], (int, float)) and not isinstance(args[0], bool)
                           or args[0] in ("inf", "-inf", "nan"))
        if (number
                and schema_args and isinstance(schema_args[0].type, torch.TensorType)):
            # A number as an op's first tensor (`1.0 - x` after decomposition): kiln takes wrapped
            # scalars only after it, so it becomes a 0-dim tensor, which promotes the same way.
            # In the op's result dtype where that is not a comparison's bool: promoting it with
            # the other operand gives that dtype back, as the wrapped number did.
            val = n.meta.get("val")
            if isinstance(val, torch.Tensor) and val.dtype != torch.bool and val.dtype in KILN_DTYPES:
                dtype = KILN_DTYPES[val.dtype]
            else:
                dtype = "i64" if isinstance(args[0], int) else KILN_DTYPES[torch.get_default_dtype()]
            nodes.append({"name": n.name + "_self", "op": "aten.scalar_tensor.default",
                          "args": [args[0]], "kwargs": {"dtype": dtype}})
            args[0] = "%" + n.name + "_self"
        node = {"name": n.name, "op": op, "args": args}
        kwargs = {k: c.arg(v, where) for k, v in n.kwargs.items()
                  if not isinstance(v, _IGNORED_TYPES)}
        if kwargs:
            node["kwargs"] = kwargs
        nodes.append(node)
        c.refs[n] = "%" + n.name
    if outputs is None:
        raise Unsupported("the graph has no output node")
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    graph_outputs, slots = [], []
    for k, o in enumerate(outputs):
        if o is None:
            slots.append(None)
            continue
        if not isinstance(o, torch.fx.Node):
            raise Unsupported(f"output {k} is {o!r}, not a tensor")
        ref = c.arg(o, f"output {k}")
        val = o.meta.get("val")
        if isinstance(val, torch.Tensor) and val.is_complex():
            # kiln returns complex values as f32 pairs; the caller views them as complex.
            nodes.append({"name": f"{o.name}_as_pairs_{k}", "op": "aten.view_as_real.default",
                          "args": [ref]})
            ref = f"%{o.name}_as_pairs_{k}"
            slots.append(ComplexSlot(len(graph_outputs)))
        elif (memory_order_outputs and isinstance(val, torch.Tensor)
              and (order := _memory_order(val)) is not None):
            nodes.append({"name": f"{o.name}_in_memory_order_{k}", "op": "aten.permute.default",
                          "args": [ref, order]})
            ref = f"%{o.name}_in_memory_order_{k}"
            slots.append(PermutedSlot(len(graph_outputs), [order.index(d) for d in range(len(order))]))
        else:
            slots.append(len(graph_outputs))
        graph_outputs.append(ref)
    if not graph_outputs:
        raise Unsupported("the graph returns no tensors")
    graph = {"format": "kiln.graph/1", "name": name or "", "inputs": inputs, "params": param_specs,
             "nodes": nodes, "outputs": graph_outputs}
    if not name:
        # Named by content, so the same graph in another process hits kiln's compiled-graph cache.
        digest = hashlib.sha1(json.dumps(graph, sort_keys=True).encode()).hexdigest()[:12]
        graph["name"] = "fx_" + digest
    return graph, weights, slots


def ops_of(graph):
    """The distinct ops of a kiln.graph/1 document, sorted."""
    return sorted({n["op"] for n in graph["nodes"]})
