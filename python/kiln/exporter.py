"""kiln.export: a torch.nn.Module to kiln.graph/1 JSON and its weights, through torch.export
and the Core ATen decompositions."""
import json

import torch

from . import fx_graph
from . import safetensors


def export(module, example_args, example_kwargs=None, name=None):
    """Returns (graph JSON text, {parameter name: tensor}). Parameters, buffers and lifted
    constants become the graph's params; the example arguments its inputs."""
    program = torch.export.export(module, tuple(example_args), kwargs=example_kwargs or {})
    program = program.run_decompositions()
    gm = program.graph_module
    sig = program.graph_signature
    state = dict(program.state_dict)
    state.update(getattr(program, "constants", {}) or {})
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    kinds = torch.export.graph_signature.InputKind
    params, examples = {}, []
    user = iter([a for a in example_args] + list((example_kwargs or {}).values()))
    for node, spec in zip(placeholders, sig.input_specs):
        if spec.kind in (kinds.PARAMETER, kinds.BUFFER, kinds.CONSTANT_TENSOR):
            value = state[spec.target]
            params[node.name] = value.detach()
            examples.append(value)
        elif spec.kind == kinds.USER_INPUT:
            examples.append(next(user))
        else:
            raise fx_graph.Unsupported(f"input '{node.name}' of kind {spec.kind}")
    # Only what the caller gets back: buffer mutations (batch-norm statistics in training
    # mode) are not outputs of an inference graph.
    out_kinds = torch.export.graph_signature.OutputKind
    output_node = next(n for n in gm.graph.nodes if n.op == "output")
    keep = [i for i, s in enumerate(sig.output_specs) if s.kind == out_kinds.USER_OUTPUT]
    if len(keep) != len(sig.output_specs):
        values = output_node.args[0]
        output_node.args = ([values[i] for i in keep],)
    graph, weights, _ = fx_graph.convert(gm, examples, params,
                                         name=name or type(module).__name__.lower())
    return json.dumps(graph, indent=1), weights


def save(module, example_args, path_stem, example_kwargs=None, name=None):
    """Writes PATH_STEM.json and PATH_STEM.safetensors, which `kiln run` executes."""
    graph, weights = export(module, example_args, example_kwargs, name)
    with open(path_stem + ".json", "w") as f:
        f.write(graph)
    safetensors.write(path_stem + ".safetensors", weights)
    return path_stem + ".json", path_stem + ".safetensors"
