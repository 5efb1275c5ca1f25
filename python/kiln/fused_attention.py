"""PyTorch's fused attention ops, which scaled_dot_product_attention becomes when a graph is
traced for a GPU (flash, memory-efficient, cuDNN; the CPU's flash form too), as kiln's
aten.scaled_dot_product_attention.default: kiln runs that as the plugin's fused attention call
where it offers one, as its decomposition elsewhere. Only where the graph reads nothing but the
attention output (no log-sum-exp for a backward) and dropout is off."""
import operator

_FUSED = {
    "aten._scaled_dot_product_flash_attention.default",
    "aten._scaled_dot_product_efficient_attention.default",
    "aten._scaled_dot_product_cudnn_attention.default",
    "aten._scaled_dot_product_flash_attention_for_cpu.default",
}
SDPA = "aten.scaled_dot_product_attention.default"


def _bound(node):
    """The op's arguments by schema name, defaults filled in."""
    values = {}
    for k, arg in enumerate(node.target._schema.arguments):
        if k < len(node.args):
            values[arg.name] = node.args[k]
        elif arg.name in node.kwargs:
            values[arg.name] = node.kwargs[arg.name]
        else:
            values[arg.name] = arg.default_value
    return values


def as_sdpa(node):
    """(args, kwargs) of the scaled_dot_product_attention that FX `node` computes, or None
    when it is no fused attention op, an output other than the attention is read, or it drops
    out."""
    if str(node.target) not in _FUSED:
        return None
    if any(u.target is not operator.getitem or u.args[1] != 0 for u in node.users):
        return None
    a = _bound(node)
    if a.get("dropout_p", 0.0):
        return None
    mask = a.get("attn_bias", a.get("attn_mask"))
    args = [a["query"], a["key"], a["value"], mask, 0.0, bool(a.get("is_causal", False))]
    scale = a.get("scale")
    return args, ({"scale": scale} if scale is not None else {})
