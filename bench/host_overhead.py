#!/usr/bin/env python3
"""The host's fixed cost of one call of a compiled graph, where the device's work is nothing:
x + 1 on 16 elements. Per row, the median µs per call over --calls calls (wall time, the
device synchronized after each call: kiln's calls return when the device is done) of eager
PyTorch, torch.compile's default backend (Inductor), torch.compile(backend="kiln"), and a kiln
CompiledGraph called directly (the Python bridge without Dynamo's wrappers), and the C entry
point alone with its arguments prepared once (the runtime's own cost); with --profile, a
cProfile breakdown of the direct call's Python side.

    KILN_LIBRARY=lib/libkiln.so PYTHONPATH=python python3 bench/host_overhead.py --device cuda \\
        --config configs/nvidia.yaml
"""
import argparse
import statistics
import sys
import time
import warnings

import torch


def median_us(fn, calls, sync):
    for _ in range(50):
        fn()
    sync()
    samples = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        sync()
        samples.append((time.perf_counter() - t) * 1e6)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--config", default=None)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    import kiln

    dev = torch.device(a.device)
    sync = (lambda: torch.cuda.synchronize()) if dev.type == "cuda" else (lambda: None)
    x = torch.randn(16, device=dev)

    def f(x):
        return x + 1

    rows = []
    with torch.no_grad():
        rows.append(("eager", median_us(lambda: f(x), a.calls, sync)))
        torch._dynamo.reset()
        g = torch.compile(f)
        rows.append(("inductor", median_us(lambda: g(x), a.calls, sync)))
        torch._dynamo.reset()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k = torch.compile(f, backend=kiln.torch_backend, options={"config": a.config})
            k(x)
        rows.append(("kiln torch.compile", median_us(lambda: k(x), a.calls, sync)))
        graph = {"format": "kiln.graph/1", "name": "add_one",
                 "inputs": [{"name": "x", "dtype": "f32", "shape": [16]}],
                 "nodes": [{"name": "y", "op": "aten.add.Scalar", "args": ["%x", 1]}],
                 "outputs": ["%y"]}
        cg = kiln.Session(a.config).compile(graph)
        rows.append(("kiln CompiledGraph", median_us(lambda: cg(x), a.calls, sync)))
        out = [torch.empty(16, device=dev)]
        rows.append(("kiln CompiledGraph, out given", median_us(lambda: cg(x, out=out), a.calls,
                                                                 sync)))
        # The C entry point alone, its DLTensor arguments built once: the runtime's own cost.
        import ctypes

        from kiln import _library as L
        from kiln.runtime import _dl_tensor

        keep = []
        ins = (ctypes.POINTER(L.DLTensor) * 1)(ctypes.pointer(_dl_tensor(x, keep)))
        outs = (ctypes.POINTER(L.DLTensor) * 1)(ctypes.pointer(_dl_tensor(out[0], keep)))
        run = L.library().kiln_graph_run
        rows.append(("kiln_graph_run (C), arguments prepared",
                     median_us(lambda: run(cg._handle, ins, 1, outs, 1), a.calls, sync)))
    print(f"{a.device}, torch {torch.__version__}, median µs per call of x + 1 (16 elements) "
          f"over {a.calls} calls")
    print("| path | µs per call |\n|---|---|")
    for name, us in rows:
        print(f"| {name} | {us:.1f} |")
    if a.profile:
        import cProfile
        import pstats

        p = cProfile.Profile()
        p.enable()
        for _ in range(a.calls):
            cg(x, out=out)
        p.disable()
        pstats.Stats(p).sort_stats("tottime").print_stats(10)


if __name__ == "__main__":
    sys.exit(main())
