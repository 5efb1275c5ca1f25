"""Sessions and compiled graphs over libkiln.so; torch tensors cross as DLPack structs, in
place when they sit on the graph's device in the layout its program uses."""
import ctypes
import json
import os

from . import _fast_call
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
    $KILN_CONFIG, else the built-in default. `deterministic` compiles every graph with
    schedule.deterministic and autotune.deterministic on (fixed-point scatter sums, tuning
    only over configs that keep the default's numerics), whatever the config says.
    `conv_tf32` and `matmul_tf32` (True, False, or None for the config's choice) let f32
    convolutions and matmuls multiply on TF32 tensor cores where a plugin's library can."""

    def __init__(self, config=None, deterministic=False, conv_tf32=None, matmul_tf32=None):
        lib = L.library()

        def choice(flag):
            return 0 if flag is None else 1 if flag else -1

        options = L.SessionOptions(ctypes.sizeof(L.SessionOptions), None, None,
                                   1 if deterministic else 0, choice(conv_tf32),
                                   choice(matmul_tf32))
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
            call = self.__dict__.pop("_call", None)
            if call is not None and hasattr(call, "forget"):
                call.forget()  # callers held elsewhere must not run a destroyed graph
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

    def import_memory(self, nbytes, fd=None, cuda_ipc_handle=None, offset=0):
        """Imports `nbytes` of memory another process shares, from byte `offset` of what
        either a file descriptor of host memory (`fd`, for a CPU graph) or a 64-byte CUDA IPC
        handle (`cuda_ipc_handle`, for a GPU graph) names; returns its address on the graph's
        device. SharedTensor(address, ...) passes tensors in it to calls, read and written in
        place, until release_memory(address)."""
        if (fd is None) == (cuda_ipc_handle is None):
            raise KilnError("import_memory takes one of fd and cuda_ipc_handle")
        shared = L.SharedMemory()
        shared.struct_size = ctypes.sizeof(L.SharedMemory)
        shared.offset, shared.bytes = int(offset), int(nbytes)
        keep = None
        if fd is not None:
            shared.type, shared.fd = L.SHARED_POSIX_FD, int(fd)
        else:
            keep = ctypes.create_string_buffer(bytes(cuda_ipc_handle), len(cuda_ipc_handle))
            shared.type, shared.fd = L.SHARED_CUDA_IPC, -1
            shared.handle = ctypes.cast(keep, ctypes.c_void_p)
            shared.handle_size = len(cuda_ipc_handle)
        data = ctypes.c_void_p()
        if not hasattr(L.library(), "kiln_graph_import_memory"):
            raise KilnError("this libkiln.so predates runtime API 1.3: it imports no memory")
        L.check(L.library().kiln_graph_import_memory(self._handle, ctypes.byref(shared),
                                                     ctypes.byref(data)))
        return data.value

    def release_memory(self, address):
        L.check(L.library().kiln_graph_release_memory(self._handle, ctypes.c_void_p(address)))

    @property
    def last_run_copied_bytes(self):
        return L.library().kiln_graph_last_run_copied_bytes(self._handle)

    def __call__(self, *tensors, out=None):
        """Runs on torch tensors (in graph input order); returns the outputs as new tensors
        on the graph's device, or writes them into `out`."""
        if len(tensors) != len(self.inputs):
            raise KilnError(f"the graph takes {len(self.inputs)} inputs, got {len(tensors)}")
        return self.caller()(tensors, out)

    def caller(self):
        """The per-call path: a function of (a sequence of tensors in graph input order, out
        or None), without the argument count check."""
        call = self.__dict__.get("_call")
        if call is None:
            call = self._call = _caller(self)
        return call


class SharedTensor:
    """A dense row-major tensor at `address` on `graph`'s device, in memory the graph
    imported (CompiledGraph.import_memory): pass it to a call like a torch tensor, for inputs
    and in `out`."""

    def __init__(self, graph, address, dtype, shape):
        self.address, self.shape = address, tuple(shape)
        self.dtype = str(dtype).replace("torch.", "")
        self.device = graph.device  # a DLDevice

    def dl_tensor(self, keep):
        if self.dtype not in _DL:
            raise KilnError(f"kiln does not run tensors of dtype {self.dtype}")
        shape = (ctypes.c_int64 * max(len(self.shape), 1))(*self.shape)
        keep.append(shape)
        code, bits = _DL[self.dtype]
        return L.DLTensor(self.address, self.device, len(self.shape),
                          L.DLDataType(code, bits, 1), shape, None, 0)


class _Call:
    """What every call of a compiled graph repeats, done once: the output dtypes and device,
    and one DLTensor per argument whose shape and strides are rebuilt only when a tensor's
    layout differs from the previous call's (a call then sets data pointers and runs)."""

    def __init__(self, graph):
        import threading

        import torch

        self.graph = graph
        self.device = graph.torch_device
        self.cuda = self.device.type == "cuda"
        self.makers = _output_makers(torch, self.device, graph.outputs)
        self.empty = lambda: [make(*args, **kwargs) if kwargs else make(*args)
                              for make, args, kwargs in self.makers]
        self.ins = _Arguments(len(graph.inputs))
        self.outs = _Arguments(len(graph.outputs))
        self.lock = threading.Lock()  # the argument structs are shared between calls
        self.run = L.library().kiln_graph_run
        self.raw_stream = None
        if self.cuda:
            # The current stream's handle (0: the legacy default stream), without building a
            # Stream object per call.
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            index = self.device.index or 0
            self.raw_stream = (lambda: raw(index)) if raw else (
                lambda: torch.cuda.current_stream(self.device).cuda_stream)

    def sync(self):
        _torch().cuda.current_stream(self.device).synchronize()

    def __call__(self, tensors, out=None):
        if not self.graph._handle:
            raise KilnError("this compiled graph was closed")
        if out is None:
            out = self.empty()
        # kiln launches on the legacy default stream and waits for the device before it
        # returns; work queued on another stream must be done before kiln reads it.
        if self.cuda and self.raw_stream() != 0:
            self.sync()
        alive = []
        with self.lock:
            ins = self.ins.fill(tensors, alive)
            outs = self.outs.fill(out, alive)
            L.check(self.run(self.graph._handle, ins, len(tensors), outs, len(out)))
        return list(out)


def _output_makers(torch, device, outputs):
    """(callable, args, kwargs or None) per graph output, each call a fresh contiguous tensor:
    through the allocator entry point Inductor's generated code uses where torch has it (a
    few µs less per tensor than torch.empty's argument parsing), else torch.empty_strided."""
    try:
        from torch._C._dynamo import guards
        fast = {"cpu": getattr(guards, "_empty_strided_cpu", None),
                "cuda": getattr(guards, "_empty_strided_cuda", None)}.get(device.type)
    except ImportError:
        fast = None
    if device.type == "cuda" and (device.index or 0) != 0:
        fast = None  # that entry point allocates on the current device
    makers = []
    for _, dtype_name, shape in outputs:
        dtype = getattr(torch, dtype_name)
        stride, step = [], 1
        for size in reversed(shape):
            stride.append(step)
            step *= max(size, 1)
        size, stride = tuple(shape), tuple(reversed(stride))
        makers.append((fast, (size, stride, dtype), None) if fast is not None else
                      (torch.empty_strided, (size, stride), {"dtype": dtype, "device": device}))
    return tuple(makers)


def _caller(graph):
    """The per-call path of `graph`: the C one (kiln._fast_call) where it loads, with the
    Python one as its fallback for arguments it leaves (non-tensors, SharedTensor, dtypes
    or devices kiln does not take), else the Python one alone."""
    python = _Call(graph)
    fast = _fast_call.module()
    if fast is None:
        return python
    dtypes = {getattr(_torch(), name): code_bits for name, code_bits in _DL.items()}
    return fast.Caller(_fast_call.run_address(), graph._handle.value, dtypes, python.makers,
                       _raise_error_at, python, python.raw_stream, python.sync if python.cuda
                       else None)


def _raise_error_at(address):
    L.check(ctypes.c_void_p(address))


class _Arguments:
    """An array of DLTensor pointers for one side of a call, one struct per argument."""

    def __init__(self, count):
        self.structs = (L.DLTensor * max(count, 1))()
        self.pointers = (ctypes.POINTER(L.DLTensor) * max(count, 1))(
            *[ctypes.pointer(self.structs[i]) for i in range(max(count, 1))])
        self.layouts = [None] * count  # (dtype, shape, strides, device) each struct describes
        self.keep = [None] * count     # the shape and stride arrays a struct points into

    def fill(self, tensors, alive):
        """The pointer array for `tensors`; `alive` keeps tensors made here until the run."""
        tensor = _torch().Tensor  # looked up once per call, not per tensor
        for i, t in enumerate(tensors):
            if isinstance(t, SharedTensor):
                keep = []
                fresh = t.dl_tensor(keep)
                ctypes.memmove(ctypes.addressof(self.structs[i]), ctypes.addressof(fresh),
                               ctypes.sizeof(fresh))
                self.layouts[i], self.keep[i] = None, keep
                continue
            if not isinstance(t, tensor):
                t = _torch().as_tensor(t)
                alive.append(t)
            layout = (t.dtype, t.shape, t.stride(), t.device)
            d = self.structs[i]
            if layout != self.layouts[i]:
                keep = []
                fresh = _dl_tensor(t, keep)
                ctypes.memmove(ctypes.addressof(d), ctypes.addressof(fresh), ctypes.sizeof(d))
                self.layouts[i] = layout
                self.keep[i] = keep
            d.data = t.data_ptr() if t.numel() else None
        return self.pointers


def _torch():
    import torch

    return torch


def _dl_tensor(t, keep):
    """A DLTensor describing torch tensor `t` (no copy); `keep` holds what it points into."""
    import torch

    if not isinstance(t, torch.Tensor):
        t = torch.as_tensor(t)
    name = str(t.dtype).replace("torch.", "")
    if name not in _DL:
        hint = (" (a compiled graph takes complex values as f32 pairs: pass torch.view_as_real(t))"
                if t.is_complex() else "")
        raise KilnError(f"kiln does not run tensors of dtype {t.dtype}{hint}")
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
