#!/usr/bin/env python3
"""The wide benchmark set (bench/wide_set.py) on one GPU: kiln (torch.compile with
backend="kiln", the ptx plugin) against PyTorch eager and torch.compile's default backend
(Inductor), beside a device copy of each workload's minimal bytes, measured in one run.

Per row: median ms over --runs samples of --per-sample calls between CUDA events
(cuda_timing.py), kiln vs copy (1.00 = at the copy's bandwidth), inductor/kiln and
eager/kiln (above 1: kiln is faster), the largest difference from eager relative to eager's
largest magnitude, and whether kiln left any graph to eager. Last, the geometric means.

    KILN_LIBRARY=lib/libkiln.so PYTHONPATH=python:bench python3 bench/wide_gpu.py --config configs/nvidia.yaml
"""
import argparse
import sys
import warnings

import torch

from compare_math import geomean, nbytes, rel_diff
from cuda_timing import median_ms
from wide_set import wide_workloads


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/nvidia.yaml")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--per-sample", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated substrings of workload names")
    a = ap.parse_args()
    import kiln
    import kiln.dynamo as kd

    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"median of {a.runs} samples x {a.per_sample} calls", flush=True)
    print("| workload | MB | eager ms | inductor ms | kiln ms | kiln vs copy | inductor/kiln "
          "| eager/kiln | max rel diff | eager graphs |")
    print("|---|---|---|---|---|---|---|---|---|---|", flush=True)
    vs_inductor, vs_eager = [], []
    with torch.no_grad():
        for name, fn, args, outputs in wide_workloads("cuda"):
            if a.only and not any(o in name for o in a.only.split(",")):
                continue
            moved = nbytes(args) + nbytes(outputs)
            src = torch.empty(moved // 2, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            copy = median_ms(lambda: dst.copy_(src), a.runs, a.per_sample)
            del src, dst
            expected = fn(*args)
            eager = median_ms(lambda: fn(*args), a.runs, a.per_sample)
            torch._dynamo.reset()
            inductor_fn = torch.compile(fn)
            inductor = median_ms(lambda: inductor_fn(*args), a.runs, a.per_sample)
            torch._dynamo.reset()
            kd.stats.reset()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kiln_fn = torch.compile(fn, backend=kiln.torch_backend,
                                        options={"config": a.config})
                got = kiln_fn(*args)
            rel = rel_diff(got, expected)
            ms = median_ms(lambda: kiln_fn(*args), a.runs, a.per_sample)
            vs_inductor.append(inductor / ms)
            vs_eager.append(eager / ms)
            left = len(kd.stats.eager)
            print(f"| {name} | {moved / 1e6:.1f} | {eager:.3f} | {inductor:.3f} | {ms:.3f} | "
                  f"{copy / ms:.2f} | {inductor / ms:.2f} | {eager / ms:.2f} | {rel:.1e} | "
                  f"{left} |", flush=True)
            torch.cuda.empty_cache()

    print(f"\ngeomean inductor/kiln {geomean(vs_inductor):.2f}, eager/kiln {geomean(vs_eager):.2f} "
          f"over {len(vs_inductor)} workloads")


if __name__ == "__main__":
    sys.exit(main())
