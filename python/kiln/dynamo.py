"""torch.compile(model, backend="kiln"): Dynamo hands over FX graphs, AOTAutograd turns
them into ATen forward and backward graphs (Core ATen decompositions), and kiln compiles
each one. A graph kiln cannot take (an op it lacks, a dynamic shape, a device no plugin
serves) runs eagerly instead, with one warning that names why.

Options: torch.compile(model, backend="kiln", options={"config": "nvidia.yaml"}) or
$KILN_CONFIG; the default is kiln's built-in config (the CPU plugin). Under
torch.use_deterministic_algorithms(True) graphs compile in kiln's deterministic mode
(schedule.deterministic: float scatter sums in fixed point, the same bits every run). f32
convolutions and matmuls multiply on TF32 tensor cores where torch.backends.cudnn.allow_tf32
and torch.backends.cuda.matmul.allow_tf32 allow it (as eager and Inductor do), in the
plugins' libraries that can (cuDNN, cuBLAS).
"""
import threading
import warnings
import weakref

import torch

from . import fx_graph
from .runtime import KilnError, Session

_sessions = {}
_sessions_lock = threading.Lock()


def _session(config, deterministic=False, conv_tf32=None, matmul_tf32=None):
    with _sessions_lock:
        key = (config, deterministic, conv_tf32, matmul_tf32)
        if key not in _sessions:
            _sessions[key] = Session(config, deterministic=deterministic, conv_tf32=conv_tf32,
                                     matmul_tf32=matmul_tf32)
        return _sessions[key]


class Stats:
    """What the backend did in this process: graphs compiled by kiln, graphs left to eager
    (and why), and compiled-graph cache hits."""

    def __init__(self):
        self.compiled = 0
        self.deterministic = 0  # of those, compiled in deterministic mode
        self.cache_hits = 0
        self.eager = []  # (reason, op or None)
        self.ops = set()
        self.host_ops = set()  # ops kiln ran on its host interpreter inside compiled graphs
        # The compiled graphs still alive (kiln.runtime.CompiledGraph), in compile order:
        # held weakly, so counting them keeps no device memory alive.
        self._graphs = []

    def reset(self):
        self.__init__()

    @property
    def graphs(self):
        return [g for g in (ref() for ref in self._graphs) if g is not None]


stats = Stats()


def _eager(gm, reason, op=None):
    stats.eager.append((reason, op))
    warnings.warn(f"kiln: running a graph eagerly: {reason}", RuntimeWarning, stacklevel=3)
    return gm.forward


_RANDOM_OPS = {"aten.rand.default", "aten.randn.default", "aten.randperm.default",
               "aten.native_dropout.default"}


def _draw_seed():
    """A seed from torch's default generator (advancing it, as a draw would). The backend runs
    under AOTAutograd's fake tensor mode, which a real draw must step out of."""
    try:
        from torch._subclasses.fake_tensor import unset_fake_temporarily
    except ImportError:  # an older torch: the seed manual_seed set
        return torch.initial_seed()
    with unset_fake_temporarily():
        return int(torch.randint(0, 2**62, ()).item())


def _compile_graph(gm, example_inputs, config, boxed=False):
    """A function running `gm` through kiln (or eagerly, with a warning saying why): called
    with the graph's arguments, or with one list of them where `boxed` (AOTAutograd's
    convention, then marked `_boxed_call`)."""
    try:
        graph, weights, slots = fx_graph.convert(gm, list(example_inputs),
                                                 memory_order_outputs=True)
    except fx_graph.Unsupported as exc:
        return _eager(gm, str(exc), exc.op)
    devices = {t.device for t in example_inputs if isinstance(t, torch.Tensor)}
    try:
        deterministic = torch.are_deterministic_algorithms_enabled()
        # The numerics PyTorch would give these f32 products (read when the graph compiles,
        # as Inductor does).
        conv_tf32 = bool(torch.backends.cudnn.allow_tf32)
        matmul_tf32 = bool(torch.backends.cuda.matmul.allow_tf32)
        compiled = _session(config, deterministic, conv_tf32,
                            matmul_tf32).compile(graph, weights)
    except KilnError as exc:
        if not exc.user:
            raise
        op = next((o for o in fx_graph.ops_of(graph) if f"'{o}'" in str(exc)), None)
        return _eager(gm, str(exc), op)
    served = compiled.torch_device
    for d in devices:
        if d.type != "cpu" and (d.type != served.type or (d.index or 0) != (served.index or 0)):
            return _eager(gm, f"inputs on {d}, but kiln compiled for {served}")
    # Random ops (dropout) draw from a seed taken from torch's generator: torch.manual_seed
    # before compiling repeats the same sequence of runs.
    if _RANDOM_OPS & set(fx_graph.ops_of(graph)):
        compiled.set_random_seed(_draw_seed())
    stats.compiled += 1
    stats._graphs.append(weakref.ref(compiled))
    stats.deterministic += bool(compiled.stats.get("deterministic"))
    stats.cache_hits += compiled.from_cache
    stats.ops.update(fx_graph.ops_of(graph))
    stats.host_ops.update(h.rsplit("(", 1)[-1].rstrip(")") for h in compiled.stats["host_ops"])

    complex_inputs = any(isinstance(t, torch.Tensor) and t.is_complex() for t in example_inputs)
    if not complex_inputs and all(type(s) is int for s in slots):  # noqa: E721 (subclasses)
        # The common case on the per-call path: real tensors in, each output a kiln output.
        call = compiled.caller()
        identity = list(slots) == list(range(len(compiled.outputs)))
        if identity and boxed:
            # The caller takes AOTAutograd's boxed convention (one list of arguments) as it
            # is: no frame of make_boxed_func's unpacking them. It keeps the mark in its own
            # __dict__, which torch's wrappers (functools.wraps) copy.
            call._boxed_call = True
            return call

        def run(*args):
            outs = call(args, None)
            return tuple(outs) if identity else tuple(outs[s] for s in slots)
    else:
        def run(*args):
            if complex_inputs:
                args = [torch.view_as_real(a) if isinstance(a, torch.Tensor) and a.is_complex()
                        else a for a in args]
            outs = compiled(*args)
            return tuple(None if s is None
                         else torch.view_as_complex(outs[s]) if isinstance(s, fx_graph.ComplexSlot)
                         else outs[s].permute(s.dims) if isinstance(s, fx_graph.PermutedSlot)
                         else outs[s] for s in slots)

    return run


def kiln_backend(gm, example_inputs, options=None, **kwargs):
    """The Dynamo backend ("kiln"): forward and backward graphs both through kiln."""
    from functorch.compile import make_boxed_func
    from torch._decomp import core_aten_decompositions
    from torch._dynamo.backends.common import aot_autograd

    config = (options or {}).get("config") if isinstance(options, dict) else None

    def compiler(graph_module, inputs):
        run = _compile_graph(graph_module, inputs, config, boxed=True)
        return run if getattr(run, "_boxed_call", False) else make_boxed_func(run)

    return aot_autograd(fw_compiler=compiler, bw_compiler=compiler,
                        decompositions=core_aten_decompositions())(gm, example_inputs)
