#!/usr/bin/env python3
"""The host's fixed cost of one call of a compiled graph, where the device's work is nothing:
x + 1 on 16 elements. Per row, median µs per call, two ways: one call then a wait for the
device (latency: what a call costs alone), and calls back to back with one wait at the end
(throughput: the host's cost when the device keeps up, as in a model's steady state). Rows
are timed in turn, the order rotated every round (interleaved_us). Rows: eager PyTorch,
torch.compile's default backend (Inductor) and its reduce-overhead mode (CUDA graphs),
torch.compile(backend="kiln") with runs that wait for the device and with asynchronous runs
(run.asynchronous), a kiln CompiledGraph called directly (the Python bridge without Dynamo's
wrappers), both again through the bridge's ctypes path (where its C call module is not
built), and the C entry point alone with its arguments prepared once (the runtime's own
cost, ctypes' call included); the kiln rows again with run.cuda_graphs (each call one replay
of a recording, where the device records). Then the cost per kernel launched: x + 1 repeated
11 times with fusion off (11 kernels) against once, back to back, with and without
run.cuda_graphs, and eager's per op.
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
import types
import warnings

import torch


def interleaved_us(rows, calls, sync, rounds=20):
    """Per row (name, fn): the median µs of one call then a wait, and per call of calls back to
    back with one wait at the end. Rows are timed in turn, a block of calls each, the order
    rotated every round: this host's speed drifts by tens of percent between seconds, and
    timing rows one after another put that drift between rows."""
    for _, fn in rows:
        for _ in range(50):
            fn()
    sync()
    per_round = max(calls // rounds, 1)
    alone, queued = [[] for _ in rows], [[] for _ in rows]
    for i in range(rounds):
        for k in range(len(rows)):
            j = (i + k) % len(rows)
            fn = rows[j][1]
            for _ in range(per_round):
                t = time.perf_counter()
                fn()
                sync()
                alone[j].append((time.perf_counter() - t) * 1e6)
            t = time.perf_counter()
            for _ in range(per_round):
                fn()
            sync()
            queued[j].append((time.perf_counter() - t) * 1e6 / per_round)
    return {name: (statistics.median(alone[j]), statistics.median(queued[j]))
            for j, (name, _) in enumerate(rows)}


def fresh(fn, tag):
    """`fn` with a code object of its own: Dynamo keeps compiled entries per code object, so
    each row's compile stays cached beside the others' while rows are timed in turn."""
    return types.FunctionType(fn.__code__.replace(co_name=f"{fn.__name__}_{tag}"),
                              fn.__globals__, f"{fn.__name__}_{tag}")


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

    rows = []

    def kiln_compiled(fn, config, tag):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k = torch.compile(fresh(fn, tag), backend=kiln.torch_backend,
                              options={"config": config})
            k(x)
        return k

    with torch.no_grad():
        rows.append(("eager", lambda: f(x)))
        g = torch.compile(fresh(f, "inductor"))
        g(x)
        rows.append(("inductor", lambda: g(x)))
        if dev.type == "cuda":
            gr = torch.compile(fresh(f, "reduce_overhead"), mode="reduce-overhead")
            for _ in range(3):
                gr(x)
            rows.append(("inductor reduce-overhead (CUDA graphs)", lambda: gr(x)))
        k = kiln_compiled(f, waiting, "waiting")
        rows.append(("kiln torch.compile, runs wait", lambda: k(x)))
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

        def direct_rows(config, suffix):
            k = kiln_compiled(f, config, "async" + suffix.replace(", ", "_"))
            cg = kiln.Session(config).compile(graph)
            rows.extend([
                ("kiln torch.compile, asynchronous" + suffix, lambda: k(x)),
                ("kiln CompiledGraph, asynchronous" + suffix, lambda: cg(x)),
                ("kiln CompiledGraph, asynchronous, out given" + suffix, lambda: cg(x, out=out)),
                ("kiln_graph_run (C), arguments prepared, asynchronous" + suffix,
                 lambda: run(cg._handle, ins, 1, outs, 1))])
            return cg

        cg = direct_rows(asynchronous, "")
        # The bridge's ctypes path, which runs where the C call module is not built.
        with mock.patch.object(_fast_call, "module", lambda: None):
            kc = kiln_compiled(f, asynchronous, "ctypes")
        through_ctypes = runtime._Call(cg)
        rows.extend([("kiln torch.compile, asynchronous, ctypes path", lambda: kc(x)),
                     ("kiln CompiledGraph, asynchronous, ctypes path",
                      lambda: through_ctypes((x,), None))])
        direct_rows(graphs, ", cuda_graphs")
        # Per kernel launched: 11 unfused kernels against 1, back to back, asynchronous.
        kernel_rows = []
        for config, suffix in ((unfused, ""), (unfused_graphs, ", cuda_graphs")):
            k1 = kiln_compiled(f, config, "one" + suffix.replace(", ", "_"))
            k11 = kiln_compiled(f11, config, "eleven" + suffix.replace(", ", "_"))
            kernel_rows.append((f"kiln, 1 kernel{suffix}", f"kiln, 11 kernels{suffix}"))
            rows.extend([(kernel_rows[-1][0], lambda k1=k1: k1(x)),
                         (kernel_rows[-1][1], lambda k11=k11: k11(x))])
        rows.extend([("eager, 1 op", lambda: f(x)), ("eager, 11 ops", lambda: f11(x))])
        # A recompile while timing would time the compiler: it fails instead.
        with torch._dynamo.config.patch(error_on_recompile=True):
            times = interleaved_us(rows, a.calls, sync)
    print(f"{a.device}, torch {torch.__version__}, median µs per call of x + 1 (16 elements), "
          f"{a.calls} calls per row, rows timed in turn in 20 rounds")
    print("| path | µs per call, then a wait | µs per call, back to back |\n|---|---|---|")
    for name, _ in rows:
        alone, queued = times[name]
        print(f"| {name} | {alone:.1f} | {queued:.1f} |")
    for one, eleven in kernel_rows + [("eager, 1 op", "eager, 11 ops")]:
        t1, t11 = times[one][1], times[eleven][1]
        print(f"\nper kernel launched, {one} against {eleven}, back to back: "
              f"{(t11 - t1) / 10:.2f} µs ({t1:.1f} -> {t11:.1f} µs per call)")
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
