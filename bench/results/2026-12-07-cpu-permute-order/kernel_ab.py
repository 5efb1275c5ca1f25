"""Times the permute(0, 2, 1, 3).contiguous() kernel ([32, 128, 16, 64] f32) of each generated
C++ file given, compiled as the cpp_openmp plugin compiles on this CPU, against eager in one
process, calls in turn; first checks each against eager.
    python3 kernel_ab.py THREADS A.cpp B.cpp ..."""
import ctypes, sys, time, subprocess, statistics, torch, os
torch.set_num_threads(int(sys.argv[1]))
sys.argv = sys.argv[1:]
inc = os.environ.get("KRT_INCLUDE") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../plugins/cpp_openmp/runtime")
libs = []
for src in sys.argv[1:]:
    so = os.path.abspath(src.replace(".cpp", ".so"))
    subprocess.check_call(["g++", "-std=c++17", "-shared", "-fPIC", "-fwrapv", "-fno-math-errno", "-w", "-O3",
                           "-march=native", "-fopenmp", "-I", inc, src, "-o", so])
    libs.append((src, ctypes.CDLL(so)))
x = torch.randn(32, 128, 16, 64)
ref = x.permute(0, 2, 1, 3).contiguous()
class St(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("value", ctypes.c_int64), ("bound", ctypes.c_int64)]
def runner(lib):
    fn = lib.kiln_kernel_k0_clone
    out = torch.full((32, 16, 128, 64), float("nan"))
    bufs = (ctypes.c_void_p * 2)(x.data_ptr(), out.data_ptr())
    st = St()
    def call():
        fn(bufs, ctypes.byref(st)); return out
    return call
calls = [("eager", lambda: x.permute(0, 2, 1, 3).contiguous())] + [(s, runner(l)) for s, l in libs]
for name, c in calls:
    print(name, "equal", torch.equal(c(), ref))
times = {n: [] for n, _ in calls}
for rnd in range(40):
    for name, c in calls:
        t = time.perf_counter()
        for _ in range(3): c()
        times[name].append((time.perf_counter() - t) / 3 * 1e6)
for n in times: print(f"{n}: median {statistics.median(times[n]):.0f} us  min {min(times[n]):.0f}")
