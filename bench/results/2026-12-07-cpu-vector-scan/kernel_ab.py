"""Times the cumsum kernel (k0_cumsum, [1024, 4096] f32 along rows) of each generated C++ file
given, compiled as the cpp_openmp plugin compiles on this CPU, against eager torch.cumsum in
one process, calls in turn; first each one's largest difference from a float64 cumsum."""
import ctypes, sys, time, subprocess, statistics, torch, os
torch.set_num_threads(2)
inc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../plugins/cpp_openmp/runtime")
libs = []
for src in sys.argv[1:]:
    so = os.path.abspath(src.replace(".cpp", ".so"))
    subprocess.check_call(["g++", "-std=c++17", "-shared", "-fPIC", "-fwrapv", "-fno-math-errno", "-w", "-O3",
                           "-march=native", "-fopenmp", "-I", inc, src, "-o", so])
    libs.append((src, ctypes.CDLL(so)))
x = torch.randn(1024, 4096)
ref = x.double().cumsum(1)
class St(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("value", ctypes.c_int64), ("bound", ctypes.c_int64)]
def runner(lib):
    fn = lib.kiln_kernel_k0_cumsum
    out = torch.full((1024, 4096), float("nan"))
    bufs = (ctypes.c_void_p * 2)(x.data_ptr(), out.data_ptr())
    st = St()
    def call():
        fn(bufs, ctypes.byref(st)); return out
    return call
calls = [("eager", lambda: x.cumsum(1))] + [(s, runner(l)) for s, l in libs]
for name, c in calls:
    print(name, "max abs err vs f64", (c().double() - ref).abs().max().item())
times = {n: [] for n, _ in calls}
for rnd in range(30):
    for name, c in calls:
        t = time.perf_counter()
        for _ in range(3): c()
        times[name].append((time.perf_counter() - t) / 3 * 1e6)
for n in times: print(f"{n}: median {statistics.median(times[n]):.0f} us  min {min(times[n]):.0f}")
