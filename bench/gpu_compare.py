#!/usr/bin/env python3
"""The anchor workloads on one GPU, kiln (ptx plugin) against PyTorch eager and torch.compile,
measured in one run, printed as one table.

PyTorch is timed here with CUDA events (warm-up, then the median of --runs); a device-to-device
copy of each workload's minimal bytes gives the bandwidth floor. kiln is timed by kiln-bench
(--config configs/nvidia.yaml --size gpu), run from this script in the same session, whose
median includes kiln's per-launch synchronization (ABI v1 launches are synchronous).

    python3 bench/gpu_compare.py --kiln-bench bin/kiln-bench --config configs/nvidia.yaml
"""
import argparse
import re
import statistics
import subprocess

import torch


def median_ms(fn, runs):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def workloads():
    dev = "cuda"
    rows = (32768, 1024)

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, device=dev, dtype=dtype)

    def rms(x, w):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w

    x = randn(*rows)
    w, b = randn(rows[1]), randn(rows[1])
    a = randn(8192, 8192)
    v = randn(8192)
    s = randn(1 << 26)
    logits = randn(4096, 50257, dtype=torch.bfloat16)
    labels = torch.randint(0, 50257, (4096,), device=dev)
    return [
        ("sin_cos_1d", lambda: torch.sin(torch.cos(s)), [s], 1 << 26),
        ("add_relu_mul_bcast", lambda: torch.relu(a + v) * 2, [a, v], a.numel()),
        ("transpose_add", lambda: a + a.t(), [a], a.numel()),
        ("softmax", lambda: torch.softmax(x, -1), [x], x.numel()),
        ("layernorm", lambda: torch.nn.functional.layer_norm(x, (rows[1],), w, b), [x, w, b], x.numel()),
        ("rmsnorm", lambda: rms(x, w), [x, w], x.numel()),
        ("rowsum", lambda: x.sum(-1), [x], rows[0]),
        ("cross_entropy", lambda: torch.nn.functional.cross_entropy(logits.float(), labels), [logits, labels], 1),
    ]


def minimal_bytes(inputs, out_elements, out_itemsize=4):
    return sum(t.numel() * t.element_size() for t in inputs) + out_elements * out_itemsize


def kiln_times(kiln_bench, config, runs):
    out = subprocess.run([kiln_bench, "--config", config, "--size", "gpu", "--runs", str(runs)],
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
    args = ap.parse_args()
    kiln, raw = kiln_times(args.kiln_bench, args.config, args.runs)
    print(raw)
    print(f"{'workload':20} {'kernels':>7} {'kiln ms':>9} {'eager ms':>9} {'compile ms':>10} "
          f"{'kiln GB/s':>9} {'vs copy':>7} {'vs compile':>10}")
    for name, fn, inputs, out_elements in workloads():
        nbytes = minimal_bytes(inputs, out_elements)
        src = torch.empty(nbytes // 2, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        copy_ms = median_ms(lambda: dst.copy_(src), args.runs)  # reads and writes nbytes
        eager = median_ms(fn, args.runs)
        compiled = torch.compile(fn)
        comp = median_ms(compiled, args.runs)
        kernels, kms = kiln.get(name, (0, float("nan")))
        gbs = nbytes / (kms * 1e6)
        print(f"{name:20} {kernels:>7} {kms:>9.3f} {eager:>9.3f} {comp:>10.3f} {gbs:>9.0f} "
              f"{copy_ms / kms:>7.2f} {comp / kms:>10.2f}")


if __name__ == "__main__":
    main()
