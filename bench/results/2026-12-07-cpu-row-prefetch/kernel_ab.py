"""Times the embedding bag kernel (k0) of each generated C++ file given, compiled as the
cpp_openmp plugin compiles on this CPU, against eager F.embedding_bag in one process, calls
in turn (5 per sample, 60 samples); checks each against eager first."""
import ctypes, sys, time, subprocess, statistics, torch
import torch.nn.functional as F
torch.set_num_threads(2)
import os
inc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../plugins/cpp_openmp/runtime")
libs = []
for src in sys.argv[1:]:
    so = src.replace(".cpp", ".so")
    subprocess.check_call(["g++", "-std=c++17", "-shared", "-fPIC", "-fwrapv", "-fno-math-errno", "-w", "-O3",
                           "-march=native", "-fopenmp", "-I", inc, src, "-o", so])
    libs.append((src, ctypes.CDLL(os.path.abspath(so))))
g = torch.Generator().manual_seed(1)
w = torch.randn(50257, 768, generator=g)
ids = torch.randint(0, 50257, (8192,), generator=g)
off = torch.arange(0, 8192, 32)
ref = F.embedding_bag(ids, w, off, mode="sum")
class St(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("value", ctypes.c_int64), ("bound", ctypes.c_int64)]
def runner(lib):
    fn = lib.kiln_kernel_k0__embedding_bag
    out = torch.full((256, 768), float("nan"))
    bufs = (ctypes.c_void_p * 4)(off.data_ptr(), ids.data_ptr(), w.data_ptr(), out.data_ptr())
    st = St()
    def call():
        fn(bufs, ctypes.byref(st))
        return out
    return call
calls = [("eager", lambda: F.embedding_bag(ids, w, off, mode="sum"))] + [(s, runner(l)) for s, l in libs]
for name, c in calls:
    err = (c() - ref).abs().max().item()
    print(name, "max err", err)
times = {n: [] for n, _ in calls}
for rnd in range(60):
    for name, c in calls:
        t = time.perf_counter(); 
        for _ in range(5): c()
        times[name].append((time.perf_counter() - t) / 5 * 1e6)
for n in times: print(f"{n}: median {statistics.median(times[n]):.0f} us  min {min(times[n]):.0f}")
