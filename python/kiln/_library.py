"""libkiln.so through ctypes: the runtime C API of sdk/include/kiln/runtime.h, declared here.

The library is found through $KILN_LIBRARY (a path), else beside a `kiln` program on PATH
(<prefix>/bin/kiln -> <prefix>/lib/libkiln.so), else by the dynamic loader's search.
"""
import ctypes
import ctypes.util
import os
import shutil

API_MAJOR = 1


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class SessionOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("config_text", ctypes.c_char_p),
        ("config_path", ctypes.c_char_p),
        ("deterministic", ctypes.c_int32),
        ("conv_tf32", ctypes.c_int32),  # since 1.4: 0 the config's, 1 allow, -1 forbid
        ("matmul_tf32", ctypes.c_int32),
    ]


class GraphSource(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("graph_text", ctypes.c_char_p),
        ("graph_text_size", ctypes.c_size_t),
        ("graph_path", ctypes.c_char_p),
        ("weights", ctypes.c_void_p),
        ("weights_size", ctypes.c_size_t),
        ("weights_path", ctypes.c_char_p),
    ]


class TensorInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("name", ctypes.c_char_p),
        ("dtype", DLDataType),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
    ]


class SharedMemory(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("type", ctypes.c_uint32),
        ("fd", ctypes.c_int32),
        ("handle", ctypes.c_void_p),
        ("handle_size", ctypes.c_size_t),
        ("offset", ctypes.c_uint64),
        ("bytes", ctypes.c_uint64),
    ]


SHARED_POSIX_FD, SHARED_CUDA_IPC = 1, 2
KDL_CPU, KDL_CUDA = 1, 2
USER_ERROR, INTERNAL_ERROR = 1, 2


class KilnError(RuntimeError):
    """An error kiln reported; `user` is False for a bug in kiln or a plugin."""

    def __init__(self, message, user=True):
        super().__init__(message)
        self.user = user


def _candidates():
    explicit = os.environ.get("KILN_LIBRARY")
    if explicit:
        return [explicit]
    found = []
    program = shutil.which("kiln")
    if program:
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(program)))
        found.append(os.path.join(prefix, "lib", "libkiln.so"))
    found += ["libkiln.so.1", ctypes.util.find_library("kiln") or "libkiln.so"]
    return found


def _declare(lib):
    p, e = ctypes.c_void_p, ctypes.c_void_p
    signatures = {
        "kiln_runtime_version": (None, [ctypes.POINTER(ctypes.c_uint32)] * 2),
        "kiln_runtime_error_code": (ctypes.c_int, [e]),
        "kiln_runtime_error_message": (ctypes.c_char_p, [e]),
        "kiln_runtime_error_destroy": (None, [e]),
        "kiln_session_open": (e, [ctypes.POINTER(SessionOptions), ctypes.POINTER(p)]),
        "kiln_session_close": (None, [p]),
        "kiln_graph_compile": (e, [p, ctypes.POINTER(GraphSource), ctypes.POINTER(p)]),
        "kiln_graph_destroy": (None, [p]),
        "kiln_graph_device": (DLDevice, [p]),
        "kiln_graph_target": (ctypes.c_char_p, [p]),
        "kiln_graph_from_cache": (ctypes.c_int, [p]),
        "kiln_graph_stats_json": (ctypes.c_char_p, [p]),
        "kiln_graph_num_inputs": (ctypes.c_size_t, [p]),
        "kiln_graph_num_outputs": (ctypes.c_size_t, [p]),
        "kiln_graph_tensor_info": (e, [p, ctypes.c_int, ctypes.c_size_t, ctypes.POINTER(TensorInfo)]),
        "kiln_graph_run": (e, [p, ctypes.POINTER(ctypes.POINTER(DLTensor)), ctypes.c_size_t,
                               ctypes.POINTER(ctypes.POINTER(DLTensor)), ctypes.c_size_t]),
        "kiln_graph_last_run_copied_bytes": (ctypes.c_uint64, [p]),
        "kiln_graph_set_random_seed": (None, [p, ctypes.c_uint64]),
        "kiln_graph_import_memory": (e, [p, ctypes.POINTER(SharedMemory), ctypes.POINTER(p)]),
        "kiln_graph_release_memory": (e, [p, p]),
    }
    # Since runtime API 1.3; an older libkiln.so lacks them and the rest still works.
    optional = {"kiln_graph_import_memory", "kiln_graph_release_memory"}
    for name, (restype, argtypes) in signatures.items():
        if name in optional and not hasattr(lib, name):
            continue
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


_lib = None


def library():
    """The loaded libkiln.so (loaded once, then shared)."""
    global _lib
    if _lib is None:
        errors = []
        for path in _candidates():
            try:
                lib = ctypes.CDLL(path)
                break
            except OSError as exc:
                errors.append(f"{path}: {exc}")
        else:
            raise KilnError("cannot load libkiln.so (set KILN_LIBRARY to its path): " + "; ".join(errors))
        major, minor = ctypes.c_uint32(), ctypes.c_uint32()
        _declare(lib).kiln_runtime_version(ctypes.byref(major), ctypes.byref(minor))
        if major.value != API_MAJOR:
            raise KilnError(f"libkiln.so speaks runtime API {major.value}.{minor.value}, this package {API_MAJOR}.x")
        _lib = lib
    return _lib


def check(error):
    """Raises the KilnError an API call returned (and frees it); nothing for NULL."""
    if not error:
        return
    lib = library()
    message = lib.kiln_runtime_error_message(error).decode("utf-8", "replace")
    user = lib.kiln_runtime_error_code(error) == USER_ERROR
    lib.kiln_runtime_error_destroy(error)
    raise KilnError(message, user)
