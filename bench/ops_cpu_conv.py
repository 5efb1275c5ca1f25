#!/usr/bin/env python3
"""2-d convolutions on the CPU as CNNs meet them (ResNet-18/MobileNet layers at batch 1, and a
small odd shape), through torch.compile(backend="kiln") on the cpp_openmp plugin three ways —
the oneDNN library call (the default), the generated kernels (schedule.library_conv: false),
and exhaustive autotuning, which times both per shape and keeps the faster — against eager
PyTorch (its own oneDNN) and torch.compile's default backend (Inductor, C++), in one run at
--threads threads for every contender.

Per row: median ms per call over --runs calls after warm-up (wall time: a CPU call returns
when its work is done), eager/kiln for each kiln variant (above 1: kiln is faster), and the
largest difference from eager relative to eager's largest magnitude.

    KILN_LIBRARY=build/default/lib/libkiln.so PYTHONPATH=python python3 bench/ops_cpu_conv.py
"""
import argparse
import os
import sys
import tempfile
import warnings

import torch
import torch.nn.functional as F

from cpu_timing import config, median_ms


def cases(only):
    out = []

    def add(name, fn, *args):
        if not only or any(o in name for o in only.split(",")):
            out.append((name, fn, args))

    def randn(*s):
        return torch.randn(*s)

    for layout, fmt in (("nchw", torch.contiguous_format), ("nhwc", torch.channels_last)):
        x = randn(1, 64, 56, 56).to(memory_format=fmt)
        add(f"conv3x3_64_56_b1_{layout}", lambda x, w: F.conv2d(x, w, padding=1), x,
            randn(64, 64, 3, 3).to(memory_format=fmt))
        x2 = randn(1, 256, 56, 56).to(memory_format=fmt)
        add(f"conv1x1_256to64_56_b1_{layout}", lambda x, w: F.conv2d(x, w), x2,
            randn(64, 256, 1, 1).to(memory_format=fmt))
    add("stem7x7s2_3to64_224_b1", lambda x, w: F.conv2d(x, w, stride=2, padding=3),
        randn(1, 3, 224, 224), randn(64, 3, 7, 7))
    add("conv3x3s2_128to256_28_b1", lambda x, w: F.conv2d(x, w, stride=2, padding=1),
        randn(1, 128, 28, 28), randn(256, 128, 3, 3))
    add("depthwise3x3_128_56_b1", lambda x, w: F.conv2d(x, w, padding=1, groups=128),
        randn(1, 128, 56, 56), randn(128, 1, 3, 3))
    add("conv3x3_bias_relu_16to32_20_b2",
        lambda x, w, b: F.relu(F.conv2d(x, w, b, padding=1)),
        randn(2, 16, 20, 20), randn(32, 16, 3, 3), randn(32))
    # A U-Net decoder's up-convolutions: 2x2 stride 2, and 4x4 stride 2 padding 1 (GANs).
    add("convT2x2s2_128to64_28_b1", lambda x, w: F.conv_transpose2d(x, w, stride=2),
        randn(1, 128, 28, 28), randn(128, 64, 2, 2))
    add("convT4x4s2p1_128to64_28_b1",
        lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1),
        randn(1, 128, 28, 28), randn(128, 64, 4, 4))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--only", default="", help="comma-separated substrings of case names")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    import kiln
    import kiln.dynamo as kd

    cache = tempfile.mkdtemp(prefix="kiln-bench-conv-")
    variants = {
        "library": config(a.threads, cache, ""),
        "generated": config(a.threads, cache, "schedule: {library_conv: false}\n"),
        "autotuned": config(a.threads, cache, "autotune: {kernels: exhaustive, reps: 5}\n"),
    }
    print(f"cpu, {a.threads} threads, torch {torch.__version__}, median of {a.runs} calls; "
          f"kiln cache {cache} (fresh)", flush=True)
    print("| op | eager ms | inductor ms | kiln library ms | kiln generated ms | kiln autotuned ms "
          "| eager/library | eager/generated | eager/autotuned | inductor/autotuned | max rel diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
    with torch.no_grad():
        for name, fn, args in cases(a.only):
            expected = fn(*args)
            eager = median_ms(lambda: fn(*args), a.runs)
            torch._dynamo.reset()
            inductor_fn = torch.compile(fn)
            inductor = median_ms(lambda: inductor_fn(*args), a.runs)
            ms, rel = {}, 0.0
            for label, text in variants.items():
                torch._dynamo.reset()
                kd.stats.reset()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    kiln_fn = torch.compile(fn, backend=kiln.torch_backend,
                                            options={"config": text})
                    got = kiln_fn(*args)
                if kd.stats.eager:
                    print(f"  {name} {label}: ran eagerly: {kd.stats.eager}", file=sys.stderr)
                rel = max(rel, ((got - expected).abs().max() / expected.abs().max()).item())
                ms[label] = median_ms(lambda: kiln_fn(*args), a.runs)
            print(f"| {name} | {eager:.3f} | {inductor:.3f} | {ms['library']:.3f} | "
                  f"{ms['generated']:.3f} | {ms['autotuned']:.3f} | {eager / ms['library']:.2f} | "
                  f"{eager / ms['generated']:.2f} | {eager / ms['autotuned']:.2f} | "
                  f"{inductor / ms['autotuned']:.2f} | {rel:.1e} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
