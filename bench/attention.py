#!/usr/bin/env python3
"""Scaled dot-product attention on one GPU, measured in one process: PyTorch's SDPA as eager
calls it (flash attention where it applies: no mask; memory-efficient attention with one),
torch.compile's Inductor, and torch.compile(backend="kiln") twice: with the ptx plugin's fused
attention call, and with `fused_attention: false` (attention as its decomposition: the score
matrix in memory, the softmax fused into what it can). Shapes users meet: GPT-2 and BERT
(head dim 64), a Llama-like head dim 128, a long sequence, an odd length, short rows.

Per shape: median ms per call (CUDA events around --per-sample calls, --runs samples, after
warm-up) and TFLOP/s (4·b·h·l·s·d multiply-adds·2, halved when causal) for each; the ratios
flash/kiln and unfused/kiln; kiln's largest difference from PyTorch's result; the fused
kernel's own GPU µs per call (torch.profiler; "not run" where it did not run). With
--variants, each set of ptx options given
("attention_rows_per_warp=16,attention_keys=64;attention_rows_per_warp=32") adds a column of
kiln ms and one of kernel µs with those options, so tilings compare side by side; the largest
difference is over every kiln column.

    KILN_LIBRARY=lib/libkiln.so PYTHONPATH=python:bench \\
        python3 bench/attention.py --config configs/nvidia.yaml
"""
import argparse
import os
import tempfile

import torch
import torch.nn.functional as F

from cuda_timing import kernel_us_per_call, median_ms

# (name, batch, heads, q_len, kv_len, head_dim, mask) with mask: none, causal, padding
SHAPES = [
    ("gpt2", 8, 12, 1024, 1024, 64, "causal"),
    ("bert", 8, 12, 512, 512, 64, "padding"),
    ("llama_2k", 1, 32, 2048, 2048, 128, "causal"),
    ("long_4k", 2, 12, 4096, 4096, 64, "causal"),
    ("odd_333", 2, 8, 333, 333, 128, "none"),
    ("short_128", 32, 12, 128, 128, 64, "none"),
]


def ptx_config(config, options):
    """`config` with `options` set on the ptx plugin, written to a temporary file."""
    import yaml

    with open(config) as f:
        doc = yaml.safe_load(f)
    for plugin in doc["plugins"]:
        if plugin["name"] == "ptx":
            plugin.setdefault("options", {}).update(options)
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


def fused_kernel_us(fn, calls=5):
    """GPU µs per call of the fused kernel in `fn` (torch.profiler), or None where it did not
    run."""
    found = [us for name, us in kernel_us_per_call(fn, calls).items() if "kiln_attention" in name]
    return sum(found) if found else None


def parse_variants(text):
    """"k=v,k=v;k=v" as [(label, {k: v})]."""
    out = []
    for group in filter(None, text.split(";")):
        options = dict(item.split("=", 1) for item in group.split(","))
        label = ",".join(f"{k.removeprefix('attention_')}={v}" for k, v in options.items())
        out.append((label, options))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/nvidia.yaml")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--per-sample", type=int, default=5)
    ap.add_argument("--shapes", default="", help="names to run (all by default)")
    ap.add_argument("--variants", default="", help="ptx option sets to compare (see above)")
    a = ap.parse_args()
    import kiln

    dtype = getattr(torch, a.dtype)
    unfused = ptx_config(a.config, {"fused_attention": False})
    variants = [(label, ptx_config(a.config, options))
                for label, options in parse_variants(a.variants)]
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, {a.dtype}, median "
          f"of {a.runs} samples x {a.per_sample} calls")
    extra_heads = "".join(f"kiln {label} ms | " for label, _ in variants)
    kernel_heads = "".join(f"kernel µs {label} | " for label, _ in variants)
    print("| shape | b h l s d | mask | eager sdpa ms | inductor ms | kiln ms | kiln unfused ms | "
          f"{extra_heads}eager TFLOP/s | kiln TFLOP/s | eager/kiln | inductor/kiln | "
          f"unfused/kiln | kiln vs eager (max abs) | kernel µs | {kernel_heads}")
    print("|---" * (15 + 2 * len(variants)) + "|")
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
            results, kernel_us = {}, {}
            for label, config in [("kiln", a.config), ("unfused", unfused)] + variants:
                torch._dynamo.reset()
                fn = torch.compile(attention, backend=kiln.torch_backend,
                                   options={"config": config})
                results[label] = fn(*args)
                times[label] = median_ms(lambda: fn(*args), a.runs, a.per_sample)
                if label != "unfused":
                    kernel_us[label] = fused_kernel_us(lambda: fn(*args))
        flops = 4 * b * h * l * s * d / (2 if mask == "causal" else 1)
        tflops = {k: flops / (t * 1e-3) / 1e12 for k, t in times.items()}
        diff = max((r.float() - expected.float()).abs().max().item()
                   for label, r in results.items() if label != "unfused")

        def us(label):
            return "not run" if kernel_us[label] is None else f"{kernel_us[label]:.1f}"
        print(f"| {name} | {b} {h} {l} {s} {d} | {mask} | {times['eager']:.3f} | "
              f"{times['inductor']:.3f} | {times['kiln']:.3f} | {times['unfused']:.3f} | "
              + "".join(f"{times[label]:.3f} | " for label, _ in variants) +
              f"{tflops['eager']:.1f} | {tflops['kiln']:.1f} | "
              f"{times['eager'] / times['kiln']:.2f} | {times['inductor'] / times['kiln']:.2f} | "
              f"{times['unfused'] / times['kiln']:.2f} | {diff:.2e} | {us('kiln')} | "
              + "".join(f"{us(label)} | " for label, _ in variants), flush=True)
        del args, extra, results, expected
        torch.cuda.empty_cache()
    for path in [unfused] + [path for _, path in variants]:
        os.unlink(path)


if __name__ == "__main__":
    main()
