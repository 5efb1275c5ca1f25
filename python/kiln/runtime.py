"""Sessions and compiled graphs over libkiln.so; torch tensors cross as DLPack structs, in
place when they sit on the graph's device in the layout its program uses."""
import ctypes
import json
import os

from . import _library as L
from ._library import KilnError

# torch dtype name -> (DLPack code, bits); kiln.graph/1 dtype names beside them.
_DL = {
    "bool": (6, 8), "int8": (0, 8), "uint8": (1, 8), "int16": (0, 16), "int32": (0, 32),
    "int64": (0, 64), "float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32),
    "float64": (2, 64),
}
_FROM_DL = {v: k for k, v in _DL.items()}


class Session:
    """Options, loaded plugins and caches for every graph it compiles. `config` is a YAML
    file path, YAML text (anything with a newline or a colon-space), or None for
    $KILN_CONFIG, else the built-in default."""

    def __init__(self, config=None):
        lib = L.library()
        options = L.SessionOptions(ctypes.sizeof(L.SessionOptions), None, None)
        if config is not None:
            text = str(config)
            if "\n" in text or (": " in text and not os.path.exists(text)):
                options.config_text = text.encode()
            else:
                options.config_path = os.fspath(config).encode()
        handle = ctypes.c_void_p()
        L.check(lib.kiln_session_open(ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle

    def close(self):
        if getattr(self, "_handle", None):
            L.library().kiln_session_close(self._handle)
            self._handle = None

    __del__ = close

    def compile(self, graph, weights=None):
        """A CompiledGraph from `graph` (a path, or kiln.graph/1 JSON text or dict) and
        `weights` (a safetensors path or bytes, a {name: tensor} dict, or None)."""
        return CompiledGraph(self, graph, weights)


def _as_weights_bytes(weights):
    if isinstance(weights, dict):
        from .safetensors import serialize

        return serialize(weights)
    return weights


class CompiledGraph:
    def __init__(self, session, graph, weights=None):
        lib = L.library()
        source = L.GraphSource()
        source.struct_size = ctypes.sizeof(L.GraphSource)
        keep = []
        if isinstance(graph, dict):
            graph = json.dumps(graph)
        if isinstance(graph, str) and graph.lstrip().startswith("{"):
            text = graph.encode()
            source.graph_text, source.graph_text_size = text, len(text)
        else:
            source.graph_path = os.fspath(graph).encode()
        weights = _as_weights_bytes(weights)
        if isinstance(weights, (bytes, bytearray)):
            buffer = ctypes.create_string_buffer(bytes(weights), len(weights))
            keep.append(buffer)
            source.weights = ctypes.cast(buffer, ctypes.c_void_p)
            source.weights_size = len(weights)
        elif weights is not None:
            source.weights_path = os.fspath(weights).encode()
        handle = ctypes.c_void_p()
        L.check(lib.kiln_graph_compile(session._handle, ctypes.byref(source), ctypes.byref(handle)))
        self._handle = handle
        self.device = lib.kiln_graph_device(handle)
        self.target = lib.kiln_graph_target(handle).decode()
        self.from_cache = bool(lib.kiln_graph_from_cache(handle))
        # kernels, library_calls, host_steps, host_ops (nodes the host interpreter runs)
        self.stats = json.loads(lib.kiln_graph_stats_json(handle).decode())
        self.inputs = [self._info(0, i) for i in range(lib.kiln_graph_num_inputs(handle))]
        self.outputs = [self._info(1, i) for i in range(lib.kiln_graph_num_outputs(handle))]

    def _info(self, is_output, index):
        info = L.TensorInfo()
        info.struct_size = ctypes.sizeof(L.TensorInfo)
        L.check(L.library().kiln_graph_tensor_info(self._handle, is_output, index, ctypes.byref(info)))
        dtype = _FROM_DL.get((info.dtype.code, info.dtype.bits))
        return info.name.decode(), dtype, tuple(info.shape[d] for d in range(info.ndim))

    def close(self):
        if getattr(self, "_handle", None):
            L.library().kiln_graph_destroy(self._handle)
            self._handle = None

    __del__ = close

    @property
    def torch_device(self):
        import torch

        if self.device.device_type == L.KDL_CUDA:
            return torch.device("cuda", self.device.device_id)
        return torch.device("cpu")

    def set_random_seed(self, seed):
        """Random ops draw from `seed` from now on; the k-th run after this draws (seed, k)."""
        L.library().kiln_graph_set_random_seed(self._handle, int(seed) & (2**64 - 1))

    @property
    def last_run_copied_bytes(self):
        return L.library().kiln_graph_last_run_copied_bytes(self._handle)

    def __call__(self, *tensors, out=None):
        """Runs on torch tensors (in graph input order); returns the outputs as new tensors
        on the graph's device, or writes them into `out`."""
        import torch

        if len(tensors) != len(self.inputs):
            raise KilnError(f"the graph takes {len(self.inputs)} inputs, got {len(tensors)}")
        if out is None:
            out = [torch.empty(shape, dtype=getattr(torch, dtype), device=self.torch_device)
                   for _, dtype, shape in self.outputs]
        if self.device.device_type == L.KDL_CUDA:
            # kiln launches on the legacy default stream and waits for the device before it
            # returns; work queued on another stream must be done before kiln reads it.
            current = torch.cuda.current_stream(self.torch_device)
            if current != torch.cuda.default_stream(self.torch_device):
                current.synchronize()
        keep = []
        ins = [_dl_tensor(t, keep) for t in tensors]
        outs = [_dl_tensor(t, keep) for t in out]
        in_array = (ctypes.POINTER(L.DLTensor) * max(len(ins), 1))(*[ctypes.pointer(t) for t in ins])
        out_array = (ctypes.POINTER(L.DLTensor) * max(len(outs), 1))(*[ctypes.pointer(t) for t in outs])
        L.check(L.library().kiln_graph_run(self._handle, in_array, len(ins), out_array, len(outs)))
        return list(out)


def _dl_tensor(t, keep):
    """A DLTensor describing torch tensor `t` (no copy); `keep` holds what it points into."""
    import torch

    if not isinstance(t, torch.Tensor):
        t = torch.as_tensor(t)
    name = str(t.dtype).replace("torch.", "")
    if name not in _DL:
        raise KilnError(f"kiln does not run tensors of dtype {t.dtype}")
    code, bits = _DL[name]
    shape = (ctypes.c_int64 * max(t.dim(), 1))(*t.shape)
    strides = (ctypes.c_int64 * max(t.dim(), 1))(*t.stride())
    keep += [t, shape, strides]
    if t.device.type == "cuda":
        device = L.DLDevice(L.KDL_CUDA, t.device.index or 0)
    elif t.device.type == "cpu":
        device = L.DLDevice(L.KDL_CPU, 0)
    else:
        raise KilnError(f"kiln reads tensors on the host or a plugin's device, not {t.device}")
    return L.DLTensor(t.data_ptr() if t.numel() else None, device, t.dim(),
                      L.DLDataType(code, bits, 1), shape, strides, 0)


def compile(graph, weights=None, config=None):
    """kiln.compile(graph, weights, config=...) -> a callable on torch tensors."""
    return Session(config).compile(graph, weights)
