#!/usr/bin/env python3
"""Scaled dot-product attention on one GPU, measured in one process: PyTorch's SDPA as eager
calls it (flash attention where it applies: no mask; memory-efficient attention with one),
torch.compile's Inductor, and torch.compile(backend="kiln") twice: with the ptx plugin's fused
attention call, and with `fused_attention: false` (attention as its decomposition: the score
matrix in memory, the softmax fused into what it can). Shapes users meet: GPT-2 and BERT
(head dim 64), a Llama-like head dim 128, a long sequence, an odd length, short rows.

Per shape: median ms per call (CUDA events around --per-sample calls, --runs samples, after
warm-up) and TFLOP/s (4·b·h·l·s·d multiply-adds·2, halved when causal) for each; the ratios
flash/kiln and unfused/kiln; kiln's largest difference from PyTorch's result; whether the
fused kernel ran (its name in torch.profiler's kernel list).

    KILN_LIBRARY=lib/libkiln.so PYTHONPATH=python:bench \\
        python3 bench/attention.py --config configs/nvidia.yaml
"""
import argparse
import os
import tempfile

import torch
import torch.nn.functional as F

from cuda_timing import median_ms

# (name, batch, heads, q_len, kv_len, head_dim, mask) with mask: none, causal, padding
SHAPES = [
    ("gpt2", 8, 12, 1024, 1024, 64, "causal"),
    ("bert", 8, 12, 512, 512, 64, "padding"),
    ("llama_2k", 1, 32, 2048, 2048, 128, "causal"),
    ("long_4k", 2, 12, 4096, 4096, 64, "causal"),
    ("odd_333", 2, 8, 333, 333, 128, "none"),
    ("short_128", 32, 12, 128, 128, 64, "none"),
]


def unfused_config(config):
    """`config` with the ptx plugin's fused attention call off, written to a temporary file."""
    import yaml

    with open(config) as f:
        doc = yaml.safe_load(f)
    for plugin in doc["plugins"]:
        if plugin["name"] == "ptx":
            plugin.setdefault("options", {})["fused_attention"] = False
    fd, path = tempfile.mkstemp(suffix=".yaml")
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump(doc, f)
    return path


def inputs(batch, heads, q_len, kv_len, dim, mask, dtype):
    q = torch.randn(batch, heads, q_len, dim, device="cuda", dtype=dtype)
    k = torch.randn(batch, heads, kv_len, dim, device="cuda", dtype=dtype)
    v = torch.randn(batch, heads, kv_len, dim, device="cuda", dtype=dtype)
    extra = {"is_causal": mask == "causal"}
    if mask == "padding":  # BERT's: the last eighth of each row's keys padded out
        keep = torch.ones(batch, kv_len, device="cuda", dtype=torch.bool)
        keep[:, kv_len - kv_len // 8:] = False
        extra["attn_mask"] = ((~keep)[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
    return (q, k, v), extra


def fused_kernel_ran(fn):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return any("kiln_attention" in e.key for e in prof.key_averages())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/nvidia.yaml")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--per-sample", type=int, default=5)
    ap.add_argument("--shapes", default="", help="names to run (all by default)")
    a = ap.parse_args()
    import kiln

    dtype = getattr(torch, a.dtype)
    unfused = unfused_config(a.config)
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, {a.dtype}, median "
          f"of {a.runs} samples x {a.per_sample} calls")
    print("| shape | b h l s d | mask | eager sdpa ms | inductor ms | kiln ms | kiln unfused ms | "
          "eager TFLOP/s | kiln TFLOP/s | eager/kiln | inductor/kiln | unfused/kiln | "
          "kiln vs eager (max abs) | fused kernel ran |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    wanted = set(filter(None, a.shapes.split(",")))
    for name, b, h, l, s, d, mask in SHAPES:
        if wanted and name not in wanted:
            continue
        args, extra = inputs(b, h, l, s, d, mask, dtype)

        def attention(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, **extra)

        with torch.no_grad():
            expected = attention(*args)
            times = {"eager": median_ms(lambda: attention(*args), a.runs, a.per_sample)}
            torch._dynamo.reset()
            inductor = torch.compile(attention)
            inductor(*args)
            times["inductor"] = median_ms(lambda: inductor(*args), a.runs, a.per_sample)
            results = {}
            for label, config in (("kiln", a.config), ("unfused", unfused)):
                torch._dynamo.reset()
                fn = torch.compile(attention, backend=kiln.torch_backend,
                                   options={"config": config})
                results[label] = fn(*args)
                times[label] = median_ms(lambda: fn(*args), a.runs, a.per_sample)
                if label == "kiln":
                    ran = fused_kernel_ran(lambda: fn(*args))
        flops = 4 * b * h * l * s * d / (2 if mask == "causal" else 1)
        tflops = {k: flops / (t * 1e-3) / 1e12 for k, t in times.items()}
        diff = (results["kiln"].float() - expected.float()).abs().max().item()
        print(f"| {name} | {b} {h} {l} {s} {d} | {mask} | {times['eager']:.3f} | "
              f"{times['inductor']:.3f} | {times['kiln']:.3f} | {times['unfused']:.3f} | "
              f"{tflops['eager']:.1f} | {tflops['kiln']:.1f} | "
              f"{times['eager'] / times['kiln']:.2f} | {times['inductor'] / times['kiln']:.2f} | "
              f"{times['unfused'] / times['kiln']:.2f} | {diff:.2e} | {'yes' if ran else 'no'} |",
              flush=True)
        del args, extra, results, expected
        torch.cuda.empty_cache()
    os.unlink(unfused)


if __name__ == "__main__":
    main()
