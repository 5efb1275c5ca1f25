"""The C per-call path (_kiln_call.abi3.so, built beside libkiln.so from
capi/python_call/kiln_call.c): about 3 µs less Python per call than ctypes. It is found
beside the libkiln.so this process loaded; without it (no Python headers where kiln was
built, a Python older than 3.11, KILN_PYTHON_CALL=ctypes) calls go through ctypes."""
import ctypes
import functools
import importlib.machinery
import importlib.util
import os
import sys

from . import _library as L


class _DlInfo(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]


def run_address():
    """The address of kiln_graph_run in the loaded libkiln.so."""
    return ctypes.cast(L.library().kiln_graph_run, ctypes.c_void_p).value


def _library_dir():
    """The directory of the libkiln.so file this process loaded (the loader may have found
    it by name), or None."""
    info = _DlInfo()
    if not ctypes.CDLL(None).dladdr(ctypes.c_void_p(run_address()), ctypes.byref(info)):
        return None
    return os.path.dirname(os.path.realpath(info.fname.decode()))


def module():
    """The _kiln_call module, or None (then `reason()` says why)."""
    return _load()[0]


def reason():
    """Why calls go through ctypes ("" when they do not)."""
    return _load()[1]


@functools.cache
def _load():
    if os.environ.get("KILN_PYTHON_CALL", "c") == "ctypes":
        return None, "KILN_PYTHON_CALL=ctypes"
    if sys.implementation.name != "cpython" or sys.version_info < (3, 11):
        return None, "the C call path needs CPython >= 3.11"
    try:
        directory = _library_dir()
    except (OSError, AttributeError) as exc:  # no dladdr in this libc
        return None, f"cannot find libkiln.so's directory: {exc}"
    path = directory and os.path.join(directory, "_kiln_call.abi3.so")
    if not path or not os.path.exists(path):
        return None, f"no _kiln_call.abi3.so beside libkiln.so ({directory})"
    loader = importlib.machinery.ExtensionFileLoader("_kiln_call", path)
    spec = importlib.util.spec_from_file_location("_kiln_call", path, loader=loader)
    try:
        found = importlib.util.module_from_spec(spec)
        loader.exec_module(found)
    except Exception as exc:  # noqa: BLE001 (any failure to load leaves calls to ctypes)
        return None, f"{path}: {exc}"
    return found, ""
