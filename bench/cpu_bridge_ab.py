"""Two cpp_openmp plugin builds (A.so, B.so) and Inductor through torch.compile, in turn, on
softmax over dim 0 (the column form) and layer norm, each call making fresh outputs as models
do: medians of 10 calls per round, 3 rounds, THREADS threads (default 2).

  KILN_LIBRARY=build/default/lib/libkiln.so PYTHONPATH=python python3 bench/cpu_bridge_ab.py \
    A.so B.so [THREADS]
"""
import torch, time, statistics, kiln, tempfile, sys
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
torch.set_num_threads(threads)
def cfg(so):
    return (f"plugins:\n  - name: cpp_openmp\n    path: {so}\n    options: {{threads: {threads}}}\ndevices: [cpu:0]\n"
            f"selection: first-available\ncache: {{dir: {tempfile.mkdtemp()}}}\nlog: {{level: warn}}\n")
def med(g, n=10):
    ts=[]
    for _ in range(n):
        t=time.perf_counter(); g(); ts.append(time.perf_counter()-t)
    return statistics.median(ts)*1000
F = torch.nn.functional
cases = [("softmax dim 0", (8192, 1024), lambda x: torch.softmax(x, 0)),
         ("softmax dim 0", (8192, 512), lambda x: torch.softmax(x, 0)),
         ("layer norm", (8192, 1024), lambda x: F.layer_norm(x, (x.shape[-1],)))]
for name, shape, fn in cases:
    x = torch.randn(*shape)
    # Three distinct functions, so that Dynamo compiles each with its own backend.
    fa = torch.compile(lambda x: fn(x), backend=kiln.torch_backend, options={"config": cfg(sys.argv[1])}, dynamic=False)
    fb = torch.compile(lambda x: fn(x) + 0, backend=kiln.torch_backend, options={"config": cfg(sys.argv[2])}, dynamic=False)
    fi = torch.compile(lambda x: fn(x) * 1, dynamic=False)
    ref = fn(x)
    for f in (fa, fb, fi): assert torch.allclose(f(x), ref, rtol=1e-4, atol=1e-6)
    for r in range(3):
        a, b, i = med(lambda: fa(x)), med(lambda: fb(x)), med(lambda: fi(x))
        print(f"{name} {shape} {threads} threads, round {r+1}: a {a:.2f} ms  b {b:.2f} ms  inductor {i:.2f} ms  b/a {b/a:.2f}  inductor/b {i/b:.2f}", flush=True)
