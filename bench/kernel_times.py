#!/usr/bin/env python3
"""The GPU kernels inside one call of a benchmark case, eager PyTorch against torch.compile
with Inductor and with backend="kiln" (the ptx plugin), as torch.profiler sees them (CUPTI
sees kiln's launches and the libraries' inside them): device time per call of each kernel
over --calls calls after warm-up, and their sum. Beside ops_gpu.py's and wide_gpu.py's
tables (wall time per call), it tells a slow kernel from a slow call path.

    KILN_LIBRARY=lib/libkiln.so PYTHONPATH=python:bench python3 bench/kernel_times.py --config configs/nvidia.yaml --only conv
"""
import argparse
import warnings

import torch
from torch.profiler import ProfilerActivity, profile

import ops_gpu
from wide_set import wide_workloads


def device_us(fn, args, calls):
    """(kernel name, device µs per call) of each GPU kernel over `calls` calls after warm-up."""
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(calls):
            fn(*args)
        torch.cuda.synchronize()
    return [(e.key, e.device_time_total / calls) for e in p.key_averages()
            if e.device_time_total > 0]


def kernels(name, label, fn, args, calls):
    total = 0.0
    for key, us in device_us(fn, args, calls):
        total += us
        print(f"  {name} {label} {key[:100]}: {us:.1f} us")
    print(f"{name} {label}: {total:.1f} us of kernels per call", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/nvidia.yaml")
    ap.add_argument("--only", required=True, help="comma-separated substrings of case names")
    ap.add_argument("--calls", type=int, default=10)
    a = ap.parse_args()
    import kiln

    wide = [(n, f, args) for n, f, args, _ in wide_workloads("cuda")
            if any(o in n for o in a.only.split(","))]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fn, args in ops_gpu.cases(a.only) + wide:
            kernels(name, "eager", fn, args, a.calls)
            for label, compiled in (
                    ("inductor", lambda: torch.compile(fn)),
                    ("kiln", lambda: torch.compile(fn, backend=kiln.torch_backend,
                                                   options={"config": a.config}))):
                torch._dynamo.reset()
                kernels(name, label, compiled(), args, a.calls)
            torch._dynamo.reset()
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
