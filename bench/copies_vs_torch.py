#!/usr/bin/env python3
"""Whole calls with their copies, on a GPU: graphs whose inputs start on the host and whose
outputs end there, timed as `kiln run --bench-calls` with run.staging on and off, and PyTorch
eager doing the same (.cuda(), the op, .cpu()) from pageable and from pinned host tensors, in
one run on one machine. Graphs (f32, rows x 4096, 64 MiB per tensor by default):
  add     x + y: one kernel reading both inputs, nothing to overlap;
  chains  softmax of each of 4 inputs, 4 outputs: with staging, a chain's kernel runs while
          later inputs are copied in and its output is copied out while later kernels run.

  python3 bench/copies_vs_torch.py KILN_BIN [--calls N] [--rows R] [--graph add|chains|all]
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


def torch_call_ms(graph, rows, pinned, calls):
    import torch
    count = 2 if graph == "add" else 4
    xs = [torch.randn(rows, 4096) for _ in range(count)]
    if pinned:
        xs = [x.pin_memory() for x in xs]

    def call():
        on_device = [x.cuda(non_blocking=pinned) for x in xs]
        if graph == "add":
            return [(on_device[0] + on_device[1]).cpu()]
        return [torch.softmax(x, -1).cpu() for x in on_device]

    times = []
    for _ in range(calls + 1):
        torch.cuda.synchronize()
        start = time.perf_counter()
        out = call()
        times.append((time.perf_counter() - start) * 1000)
        del out
    return statistics.median(times[1:])


def graph_file(graph, rows, tmp):
    shape = [rows, 4096]
    if graph == "add":
        inputs = ["x", "y"]
        nodes = [{"name": "z", "op": "aten.add.Tensor", "args": ["%x", "%y"]}]
    else:
        inputs = [f"x{i}" for i in range(4)]
        nodes = [{"name": f"y{i}", "op": "aten._softmax.default", "args": [f"%x{i}", -1, False]}
                 for i in range(4)]
    path = os.path.join(tmp, f"{graph}.json")
    with open(path, "w") as f:
        json.dump({"format": "kiln.graph/1", "name": graph,
                   "inputs": [{"name": n, "dtype": "f32", "shape": shape} for n in inputs],
                   "nodes": nodes, "outputs": ["%" + n["name"] for n in nodes]}, f)
    return path, len(inputs) + len(nodes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--graph", choices=["add", "chains", "all"], default="all")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    mib = a.rows * 4096 * 4 / 2**20
    for graph in (["add", "chains"] if a.graph == "all" else [a.graph]):
        path, tensors = graph_file(graph, a.rows, tmp)
        rows = [("kiln, run.staging: true", kiln_call_ms(a.kiln, path, True, a.calls, tmp)),
                ("kiln, run.staging: false", kiln_call_ms(a.kiln, path, False, a.calls, tmp)),
                ("torch eager, pageable tensors", torch_call_ms(graph, a.rows, False, a.calls)),
                ("torch eager, pinned tensors", torch_call_ms(graph, a.rows, True, a.calls))]
        print(f"{graph} with copies: {tensors} tensors of {mib:.0f} MiB f32 in and out; "
              f"median of {a.calls} calls")
        moved = tensors * mib / 1024
        for name, ms in rows:
            print(f"  {name:32s} {ms:9.3f} ms   {moved / (ms / 1000):6.2f} GiB/s through the host")


if __name__ == "__main__":
    main()
