"""Memory another process shares, used in place (runtime API 1.3, kiln_graph_import_memory):
one process owns the memory and fills the input, a second process (kiln) imports it by the
handle the first made, runs a graph reading the input and writing the output there, and the
first reads the result through its own view. On the CPU the handle is a memfd passed to the
child; on a GPU (skipped without one, saying so) a CUDA IPC handle of a PyTorch allocation.
The child reports how many bytes its run copied: none, since it reads and writes in place.

Needs KILN_LIBRARY (libkiln.so of the build under test)."""
import json
import mmap
import os
import subprocess
import sys
import unittest

import torch

N = 1_000_003  # odd: no kernel gets a whole number of vectors
OUT_AT = (N * 4 + 255) // 256 * 256  # the output's offset, aligned as GPU kernels assume
TOTAL = OUT_AT + N * 4


def graph(n):
    """y = relu(x) * 2 + 1, exact in f32 (the check compares bit for bit)."""
    return {"format": "kiln.graph/1", "name": "shared",
            "inputs": [{"name": "x", "dtype": "f32", "shape": [n]}],
            "nodes": [{"name": "r", "op": "aten.relu.default", "args": ["%x"]},
                      {"name": "m", "op": "aten.mul.Tensor", "args": ["%r", 2.0]},
                      {"name": "y", "op": "aten.add.Tensor", "args": ["%m", 1.0]}],
            "outputs": ["%y"]}


def expected(x):
    return torch.relu(x) * 2 + 1


def child(kind, handle, offset):
    """Runs in the importing process: imports TOTAL bytes at `offset`, runs, releases."""
    import kiln

    config = ("plugins:\n  - name: cpp_openmp\ndevices: [cpu:0]\nlog: { level: warn }\n"
              if kind == "fd" else
              "plugins:\n  - name: ptx\ndevices: [cuda:0]\nlog: { level: warn }\n")
    g = kiln.Session(config).compile(graph(N))
    if kind == "fd":
        base = g.import_memory(TOTAL, fd=int(handle), offset=offset)
    else:
        base = g.import_memory(TOTAL, cuda_ipc_handle=bytes.fromhex(handle), offset=offset)
    x = kiln.SharedTensor(g, base, "float32", (N,))
    y = kiln.SharedTensor(g, base + OUT_AT, "float32", (N,))
    g(x, out=[y])
    copied = g.last_run_copied_bytes
    g.release_memory(base)
    print(json.dumps({"copied": copied, "target": g.target}))


def cuda_ipc_handle(pointer):
    """The CUDA IPC handle of the allocation holding device `pointer`, as an exporter written
    in C makes it (cuIpcGetMemHandle), and the pointer's offset into that allocation."""
    import ctypes

    cuda = ctypes.CDLL("libcuda.so.1")
    handle = (ctypes.c_char * 64)()
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    if cuda.cuIpcGetMemHandle(handle, ctypes.c_uint64(pointer)) != 0:
        raise AssertionError("cuIpcGetMemHandle failed")
    if cuda.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size),
                                    ctypes.c_uint64(pointer)) != 0:
        raise AssertionError("cuMemGetAddressRange failed")
    return bytes(handle), pointer - base.value


def run_child(kind, handle, offset, pass_fds=()):
    done = subprocess.run([sys.executable, __file__, "--child", kind, str(handle), str(offset)],
                          capture_output=True, text=True, pass_fds=pass_fds, timeout=300)
    if done.returncode != 0:
        raise AssertionError(f"the importing process failed:\n{done.stdout}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


class SharedMemory(unittest.TestCase):
    def test_a_memfd_from_another_process_on_the_cpu(self):
        offset = 4096 + 64  # the shared part starts past a header
        fd = os.memfd_create("kiln-shared-test")
        try:
            os.ftruncate(fd, offset + TOTAL)
            view = mmap.mmap(fd, offset + TOTAL)
            x = torch.randn(N)
            torch.frombuffer(view, dtype=torch.float32, count=N, offset=offset).copy_(x)
            torch.frombuffer(view, dtype=torch.float32, count=N,
                             offset=offset + OUT_AT).fill_(float("nan"))
            report = run_child("fd", fd, offset, pass_fds=(fd,))
            y = torch.frombuffer(view, dtype=torch.float32, count=N,
                                 offset=offset + OUT_AT).clone()
        finally:
            os.close(fd)  # the view's pages stay mapped until it is collected
        self.assertEqual(report["copied"], 0, "imported memory is read and written in place")
        self.assertTrue(torch.equal(y, expected(x)), "the output differs from relu(x) * 2 + 1")

    def test_a_cuda_ipc_handle_from_another_process_on_the_gpu(self):
        if not torch.cuda.is_available():
            self.skipTest("no CUDA device: CUDA IPC imports need one")
        buffer = torch.empty(TOTAL, dtype=torch.uint8, device="cuda")
        x = buffer[:N * 4].view(torch.float32)
        y = buffer[OUT_AT:OUT_AT + N * 4].view(torch.float32)
        x.copy_(torch.randn(N, device="cuda"))
        y.fill_(float("nan"))
        torch.cuda.synchronize()
        handle, offset = cuda_ipc_handle(buffer.data_ptr())
        report = run_child("ipc", handle.hex(), offset)
        torch.cuda.synchronize()
        self.assertEqual(report["target"], "ptx:0")
        self.assertEqual(report["copied"], 0, "imported memory is read and written in place")
        self.assertTrue(torch.equal(y, expected(x)), "the output differs from relu(x) * 2 + 1")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        unittest.main()
