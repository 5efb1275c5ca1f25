#!/usr/bin/env python3
"""Where a large CPU workload's time goes beside its kernel: sin(cos(x)) over 2^24 f32 values
(`--log2-size`: another power of two; at 2^21 freed memory is reused and nothing faults)
through torch.compile with kiln and with Inductor, and kiln's compiled graph called with an
output tensor given (already touched) and with a fresh one each call (64 MiB of pages the
kernel touches first), plus a fresh tensor filled by PyTorch. Best of 10 calls, ms, and minor
page faults per call, in one process.

    KILN_LIBRARY=build/default/lib/libkiln.so PYTHONPATH=python python3 bench/cpu_fresh_outputs.py
"""
import argparse
import resource
import time
import warnings

import torch

import kiln
from kiln import dynamo


def best_ms(fn, n=10):
    fn()
    best = float("inf")
    for _ in range(n):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def faults_per_call(fn, n=5):
    fn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(n):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--log2-size", type=int, default=24)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    torch.set_num_threads(a.threads)
    x = torch.randn(1 << a.log2_size)

    def f(x):
        return torch.sin(torch.cos(x))

    dynamo.stats.reset()
    with_kiln = torch.compile(f, backend=kiln.torch_backend)
    with_kiln(x)
    [graph] = dynamo.stats.graphs
    call = graph.caller()
    out = torch.empty_like(x)
    inductor = torch.compile(f)
    inductor(x)
    rows = [
        ("kiln, output given", lambda: call((x,), [out])),
        ("kiln, fresh output", lambda: call((x,), [torch.empty_like(x)])),
        ("kiln torch.compile", lambda: with_kiln(x)),
        ("inductor torch.compile", lambda: inductor(x)),
        ("fresh tensor, fill_", lambda: torch.empty_like(x).fill_(1.0)),
    ]
    print(f"cpu, {a.threads} threads, torch {torch.__version__}, sin(cos(x)) over "
          f"2^{a.log2_size} f32")
    print("| path | best ms | minor faults per call |")
    print("|---|---|---|")
    for name, fn in rows:
        print(f"| {name} | {best_ms(fn):.2f} | {faults_per_call(fn):.0f} |")


if __name__ == "__main__":
    main()
