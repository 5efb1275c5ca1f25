#!/usr/bin/env python3
"""Whole calls with their copies, on a GPU: a graph whose inputs start on the host and whose
output ends there (x + y, f32, 64 MiB per tensor), timed as `kiln run --bench-calls` with
run.staging on and off, and PyTorch eager doing the same (.cuda(), add, .cpu()) from pageable
and from pinned host tensors, in one run on one machine.

  python3 bench/copies_vs_torch.py KILN_BIN [--calls N] [--rows R]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
import time


def kiln_call_ms(kiln, graph, staging, calls, tmp):
    config = os.path.join(tmp, f"staging_{staging}.yaml")
    with open(config, "w") as f:
        f.write("plugins:\n  - name: ptx\ndevices: [cuda:0]\nselection: first-available\n"
                f"run: {{ staging: {'true' if staging else 'false'} }}\nlog: {{ level: warn }}\n")
    out = subprocess.run([kiln, "run", graph, "--config", config, "--check", "--bench-calls",
                          str(calls)], capture_output=True, text=True, check=True).stdout
    return float(re.search(r"bench-calls: median ([0-9.]+) ms", out).group(1))


def torch_call_ms(rows, pinned, calls):
    import torch
    x = torch.randn(rows, 4096)
    y = torch.randn(rows, 4096)
    if pinned:
        x, y = x.pin_memory(), y.pin_memory()
    times = []
    for call in range(calls + 1):
        torch.cuda.synchronize()
        start = time.perf_counter()
        out = (x.cuda(non_blocking=pinned) + y.cuda(non_blocking=pinned)).cpu()
        times.append((time.perf_counter() - start) * 1000)
        del out
    return statistics.median(times[1:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--rows", type=int, default=4096)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    graph = os.path.join(tmp, "add.json")
    shape = [a.rows, 4096]
    with open(graph, "w") as f:
        json.dump({"format": "kiln.graph/1", "name": "add",
                   "inputs": [{"name": "x", "dtype": "f32", "shape": shape},
                              {"name": "y", "dtype": "f32", "shape": shape}],
                   "nodes": [{"name": "z", "op": "aten.add.Tensor", "args": ["%x", "%y"]}],
                   "outputs": ["%z"]}, f)
    mib = a.rows * 4096 * 4 / 2**20
    rows = [("kiln, run.staging: true", kiln_call_ms(a.kiln, graph, True, a.calls, tmp)),
            ("kiln, run.staging: false", kiln_call_ms(a.kiln, graph, False, a.calls, tmp)),
            ("torch eager, pageable tensors", torch_call_ms(a.rows, False, a.calls)),
            ("torch eager, pinned tensors", torch_call_ms(a.rows, True, a.calls))]
    print(f"x + y with copies: two {mib:.0f} MiB f32 inputs in, one out; median of {a.calls} calls")
    moved = 3 * mib / 1024
    for name, ms in rows:
        print(f"  {name:32s} {ms:9.3f} ms   {moved / (ms / 1000):6.2f} GiB/s through the host")


if __name__ == "__main__":
    main()
