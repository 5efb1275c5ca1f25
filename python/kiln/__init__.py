"""kiln for PyTorch: compile kiln.graph/1 files, export modules to them, and serve as a
torch.compile backend ("kiln"). Pure Python over libkiln.so (ctypes)."""
from ._library import KilnError
from .runtime import CompiledGraph, Session, SharedTensor, compile


def export(module, example_args, example_kwargs=None, name=None):
    """(graph JSON text, {parameter name: tensor}) of `module` on `example_args`."""
    from .exporter import export as _export

    return _export(module, example_args, example_kwargs, name)


def torch_backend(gm, example_inputs, options=None, **kwargs):
    """The torch.compile backend, for explicit use: torch.compile(m, backend=kiln.torch_backend)."""
    from .dynamo import kiln_backend

    return kiln_backend(gm, example_inputs, options, **kwargs)


__all__ = ["CompiledGraph", "KilnError", "Session", "SharedTensor", "compile", "export",
           "torch_backend"]
