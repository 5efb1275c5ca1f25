#!/usr/bin/env python3
"""The anchor workloads on one GPU, kiln (ptx plugin) against PyTorch eager and torch.compile,
measured in one run, printed as one table.

One protocol for every column: a sample is --runs-per-sample calls back to back between two
CUDA events, divided by that count (so the host's launch cost hides behind the device's work,
as in a steady stream of calls); the median of --runs samples after a warm-up. kiln-bench does
the same with the plugin's events (`--runs-per-sample`). A device-to-device copy of each
workload's minimal bytes, timed the same way, gives the bandwidth floor.

    python3 bench/gpu_compare.py --kiln-bench bin/kiln-bench --config configs/nvidia.yaml
"""
import argparse
import re
import subprocess

import torch

from cuda_timing import median_ms


def workloads():
    dev = "cuda"
    rows = (32768, 1024)

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, device=dev, dtype=dtype)

    def rms(x, w):
        xf, wf = x.float(), w.float()
        return (xf * torch.rsqrt((xf * xf).mean(-1, keepdim=True) + 1e-6) * wf).to(x.dtype)

    a = randn(8192, 8192)
    v = randn(8192)
    s = randn(1 << 26)
    logits = randn(4096, 50257, dtype=torch.bfloat16)
    labels = torch.randint(0, 50257, (4096,), device=dev)
    out = [
        ("sin_cos_1d", lambda: torch.sin(torch.cos(s)), [s], [s]),
        ("add_relu_mul_bcast", lambda: torch.relu(a + v) * 2, [a, v], [a]),
        ("transpose_add", lambda: a + a.t(), [a], [a]),
    ]
    for dtype, suffix in ((torch.float32, ""), (torch.bfloat16, "_bf16")):
        x = randn(*rows, dtype=dtype)
        w, b = randn(rows[1], dtype=dtype), randn(rows[1], dtype=dtype)
        row = torch.empty(rows[0], device=dev, dtype=dtype)
        out += [
            ("softmax" + suffix, lambda x=x: torch.softmax(x, -1), [x], [x]),
            ("layernorm" + suffix,
             lambda x=x, w=w, b=b: torch.nn.functional.layer_norm(x, (rows[1],), w, b),
             [x, w, b], [x]),
            ("rmsnorm" + suffix, lambda x=x, w=w: rms(x, w), [x, w], [x]),
            ("rowsum" + suffix, lambda x=x: x.sum(-1), [x], [row]),
        ]
    loss = torch.empty((), device=dev)
    out.append(("cross_entropy",
                lambda: torch.nn.functional.cross_entropy(logits.float(), labels),
                [logits, labels], [loss]))
    return out


def minimal_bytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def kiln_times(kiln_bench, config, runs, per_sample):
    out = subprocess.run([kiln_bench, "--config", config, "--size", "gpu", "--runs", str(runs),
                          "--runs-per-sample", str(per_sample)],
                         check=True, capture_output=True, text=True).stdout
    times = {}
    for line in out.splitlines():
        # name, input type (may hold spaces: "f32[8192, 8192]"), kernels, median ms, ...
        m = re.match(r"^(\w+)\s+\w+\[[^\]]*\]\s+(\d+)\s+([0-9.]+)\s", line)
        if m:
            times[m.group(1)] = (int(m.group(2)), float(m.group(3)))
    return times, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln-bench", default="bin/kiln-bench")
    ap.add_argument("--config", default="configs/nvidia.yaml")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--runs-per-sample", type=int, default=10)
    args = ap.parse_args()
    kiln, raw = kiln_times(args.kiln_bench, args.config, args.runs, args.runs_per_sample)
    print(raw)
    print(f"{'workload':20} {'kernels':>7} {'kiln ms':>9} {'eager ms':>9} {'compile ms':>10} "
          f"{'kiln GB/s':>9} {'vs copy':>7} {'vs compile':>10}")
    for name, fn, inputs, outputs in workloads():
        nbytes = minimal_bytes(inputs) + minimal_bytes(outputs)
        src = torch.empty(nbytes // 2, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        copy_ms = median_ms(lambda: dst.copy_(src), args.runs, args.runs_per_sample)
        eager = median_ms(fn, args.runs, args.runs_per_sample)
        comp = median_ms(torch.compile(fn), args.runs, args.runs_per_sample)
        kernels, kms = kiln.get(name, (0, float("nan")))
        gbs = nbytes / (kms * 1e6)
        print(f"{name:20} {kernels:>7} {kms:>9.3f} {eager:>9.3f} {comp:>10.3f} {gbs:>9.0f} "
              f"{copy_ms / kms:>7.2f} {comp / kms:>10.2f}", flush=True)


if __name__ == "__main__":
    main()
