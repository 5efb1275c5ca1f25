#!/usr/bin/env python3
"""Products whose output rows are not a whole 16 bytes apart (a vocabulary of 50257 or 32001
words in bf16, an odd hidden size), on one GPU, in one process: eager `F.linear`, Inductor,
and torch.compile(backend="kiln") with the ptx plugin's three ways to run them: row sets
written in place (`unaligned_rows: groups`, the default), padded rows copied into place
(`unaligned_rows: padded`) and cuBLAS's unaligned kernel (`pad_rows_from` past the product).

Per shape: median ms per call (CUDA events around --per-sample calls, --runs samples, after
warm-up), each kiln way's ratio to Inductor, and the largest difference from eager relative
to eager's largest magnitude.

    KILN_LIBRARY=lib/libkiln.so PYTHONPATH=python:bench \\
        python3 bench/unaligned_matmul.py --config configs/nvidia.yaml
"""
import argparse
import os

import torch
import torch.nn.functional as F

from attention import ptx_config
from cuda_timing import median_ms

# (name, rows, k, n, dtype)
SHAPES = [
    ("gpt2_head_b8", 8192, 768, 50257, torch.bfloat16),
    ("gpt2_head_b1", 1024, 768, 50257, torch.bfloat16),
    ("vocab_32001", 4096, 4096, 32001, torch.bfloat16),
    ("gpt2_head_f32", 2048, 768, 50257, torch.float32),
    ("odd_width_1001", 16384, 1024, 1001, torch.bfloat16),
]

WAYS = [("groups", {"unaligned_rows": "groups"}), ("padded", {"unaligned_rows": "padded"}),
        ("as_is", {"pad_rows_from": 1 << 60})]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/nvidia.yaml")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--per-sample", type=int, default=5)
    a = ap.parse_args()
    import kiln

    configs = [(label, ptx_config(a.config, options)) for label, options in WAYS]
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, median of "
          f"{a.runs} samples x {a.per_sample} calls")
    labels = [label for label, _ in WAYS]
    print("| shape | rows k n | dtype | eager ms | inductor ms | "
          + "".join(f"kiln {label} ms | " for label in labels)
          + "".join(f"inductor/kiln {label} | " for label in labels) + "max rel diff |")
    print("|---" * (6 + 2 * len(labels)) + "|")
    for name, rows, k, n, dtype in SHAPES:
        x = torch.randn(rows, k, device="cuda", dtype=dtype)
        w = torch.randn(n, k, device="cuda", dtype=dtype) / k ** 0.5

        def head(x, w):
            return F.linear(x, w)

        with torch.no_grad():
            expected = head(x, w).float()
            scale = expected.abs().max().item()
            times = {"eager": median_ms(lambda: head(x, w), a.runs, a.per_sample)}
            torch._dynamo.reset()
            inductor = torch.compile(head)
            inductor(x, w)
            times["inductor"] = median_ms(lambda: inductor(x, w), a.runs, a.per_sample)
            diff = 0.0
            for label, config in configs:
                torch._dynamo.reset()
                fn = torch.compile(head, backend=kiln.torch_backend, options={"config": config})
                out = fn(x, w)
                diff = max(diff, (out.float() - expected).abs().max().item() / scale)
                del out
                times[label] = median_ms(lambda: fn(x, w), a.runs, a.per_sample)
        print(f"| {name} | {rows} {k} {n} | {str(dtype).removeprefix('torch.')} | "
              f"{times['eager']:.3f} | {times['inductor']:.3f} | "
              + "".join(f"{times[label]:.3f} | " for label in labels)
              + "".join(f"{times['inductor'] / times[label]:.2f} | " for label in labels)
              + f"{diff:.1e} |", flush=True)
        del x, w, expected
        torch.cuda.empty_cache()
    for _, path in configs:
        os.unlink(path)


if __name__ == "__main__":
    main()
