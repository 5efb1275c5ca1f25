#!/usr/bin/env python3
"""The host's fixed cost of one call of a compiled graph, where the device's work is nothing:
x + 1 on 16 elements. Per row, median µs per call over --calls calls, two ways: one call then
a wait for the device (latency: what a call costs alone), and calls back to back with one
wait at the end (throughput: the host's cost when the device keeps up, as in a model's steady
state). Rows: eager PyTorch, torch.compile's default backend (Inductor) and its
reduce-overhead mode (CUDA graphs), torch.compile(backend="kiln") with runs that wait for
the device and with asynchronous runs (run.asynchronous), a kiln CompiledGraph called
directly (the Python bridge without Dynamo's wrappers), both again through the bridge's
ctypes path (where its C call module is not built), and the C entry point alone with its
arguments prepared once (the runtime's own cost, ctypes' call included); the kiln rows again with run.cuda_graphs
(each call one replay of a recording, where the device records). Then the cost per kernel
launched: x + 1 repeated 11 times with fusion off (11 kernels) against once, back to back,
with and without run.cuda_graphs.
With --profile, a cProfile breakdown of the direct call's Python side.

    KILN_LIBRARY=lib/libkiln.so PYTHONPATH=python python3 bench/host_overhead.py --device cuda \\
        --config configs/nvidia.yaml
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings

import torch


def median_us(fn, calls, sync):
    """One call, then a wait: median µs."""
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


def back_to_back_us(fn, calls, sync, samples=7):
    """`calls` calls, then one wait, per call: the median of `samples` such runs."""
    for _ in range(50):
        fn()
    sync()
    per_call = []
    for _ in range(samples):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        per_call.append((time.perf_counter() - t) * 1e6 / calls)
    return statistics.median(per_call)


def variant(config, dir, name, extra):
    """`config` (a file, or None: configs/default.yaml, the built-in default) with `extra` YAML
    keys replacing its own run and schedule sections, written to `dir`."""
    config = config or os.path.join(os.path.dirname(__file__), "..", "configs", "default.yaml")
    with open(config) as f:
        text = "".join(l for l in f if not l.startswith(("run:", "schedule:")))
    path = os.path.join(dir, name + ".yaml")
    with open(path, "w") as f:
        f.write(text + extra)
    return path


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
    tmp = tempfile.TemporaryDirectory()
    waiting = variant(a.config, tmp.name, "waiting", "run: { asynchronous: false }\n")
    asynchronous = variant(a.config, tmp.name, "async", "run: { asynchronous: true }\n")
    unfused = variant(a.config, tmp.name, "unfused",
                      "run: { asynchronous: true }\nschedule: { fusion: false }\n")
    graphs = variant(a.config, tmp.name, "graphs",
                     "run: { asynchronous: true, cuda_graphs: true }\n")
    unfused_graphs = variant(a.config, tmp.name, "unfused_graphs",
                             "run: { asynchronous: true, cuda_graphs: true }\n"
                             "schedule: { fusion: false }\n")

    def f(x):
        return x + 1

    def f11(x):
        for _ in range(11):
            x = x + 1
        return x

    def both(name, fn):
        rows.append((name, median_us(fn, a.calls, sync), back_to_back_us(fn, a.calls, sync)))

    def kiln_compiled(fn, config):
        torch._dynamo.reset()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k = torch.compile(fn, backend=kiln.torch_backend, options={"config": config})
            k(x)
        return k

    rows = []
    with torch.no_grad():
        both("eager", lambda: f(x))
        torch._dynamo.reset()
        g = torch.compile(f)
        both("inductor", lambda: g(x))
        if dev.type == "cuda":
            torch._dynamo.reset()
            gr = torch.compile(f, mode="reduce-overhead")
            both("inductor reduce-overhead (CUDA graphs)", lambda: gr(x))
        k = kiln_compiled(f, waiting)
        both("kiln torch.compile, runs wait", lambda: k(x))
        graph = {"format": "kiln.graph/1", "name": "add_one",
                 "inputs": [{"name": "x", "dtype": "f32", "shape": [16]}],
                 "nodes": [{"name": "y", "op": "aten.add.Scalar", "args": ["%x", 1]}],
                 "outputs": ["%y"]}
        out = [torch.empty(16, device=dev)]
        # The C entry point alone, its DLTensor arguments built once: the runtime's own cost.
        import ctypes

        from unittest import mock

        from kiln import _fast_call, runtime
        from kiln import _library as L
        from kiln.runtime import _dl_tensor

        keep = []
        ins = (ctypes.POINTER(L.DLTensor) * 1)(ctypes.pointer(_dl_tensor(x, keep)))
        outs = (ctypes.POINTER(L.DLTensor) * 1)(ctypes.pointer(_dl_tensor(out[0], keep)))
        run = L.library().kiln_graph_run
        for config, suffix in ((asynchronous, ""), (graphs, ", cuda_graphs")):
            k = kiln_compiled(f, config)
            both("kiln torch.compile, asynchronous" + suffix, lambda: k(x))
            cg = kiln.Session(config).compile(graph)
            both("kiln CompiledGraph, asynchronous" + suffix, lambda: cg(x))
            if not suffix:
                # The bridge's ctypes path, which runs where the C call module is not built.
                with mock.patch.object(_fast_call, "module", lambda: None):
                    kc = kiln_compiled(f, config)
                    both("kiln torch.compile, asynchronous, ctypes path", lambda: kc(x))
                through_ctypes = runtime._Call(cg)
                both("kiln CompiledGraph, asynchronous, ctypes path",
                     lambda: through_ctypes((x,), None))
            both("kiln CompiledGraph, asynchronous, out given" + suffix, lambda: cg(x, out=out))
            both("kiln_graph_run (C), arguments prepared, asynchronous" + suffix,
                 lambda: run(cg._handle, ins, 1, outs, 1))
        # Per kernel launched: 11 unfused kernels against 1, back to back, asynchronous.
        per_kernel = []
        for config in (unfused, unfused_graphs):
            k1 = kiln_compiled(f, config)
            one = back_to_back_us(lambda: k1(x), a.calls, sync)
            k11 = kiln_compiled(f11, config)
            eleven = back_to_back_us(lambda: k11(x), a.calls, sync)
            per_kernel.append(((eleven - one) / 10, one, eleven))
        e1 = back_to_back_us(lambda: f(x), a.calls, sync)
        e11 = back_to_back_us(lambda: f11(x), a.calls, sync)
    print(f"{a.device}, torch {torch.__version__}, median µs per call of x + 1 (16 elements) "
          f"over {a.calls} calls")
    print("| path | µs per call, then a wait | µs per call, back to back |\n|---|---|---|")
    for name, alone, queued in rows:
        print(f"| {name} | {alone:.1f} | {queued:.1f} |")
    for (cost, one, eleven), how in zip(per_kernel, ("", ", cuda_graphs")):
        print(f"\nper kernel launched (11 kernels against 1, back to back){how}: kiln {cost:.2f} "
              f"µs ({one:.1f} -> {eleven:.1f} µs per call)")
    print(f"eager {(e11 - e1) / 10:.2f} µs per op ({e1:.1f} -> {e11:.1f})")
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
