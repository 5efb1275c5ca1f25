#!/usr/bin/env python3
"""Whole models on one GPU through torch.compile(backend="kiln") (the ptx plugin), against
eager PyTorch and torch.compile's default backend (Inductor), measured in one run.

Models are tests/python/models.py at their original widths (BERT-base and GPT-2-small
shaped: hidden 768, 12 heads, 12 layers, sequence 128; an MLP-Mixer block; ResNet-18 at
width 64 on 224x224 images), batch 8, f32 and bf16. Per row: median ms per forward over --runs samples of --per-sample calls between CUDA
events (after warm-up), the ratio of eager and Inductor to kiln, the largest difference from
eager and of eager and kiln from the same model in f32 (for bf16 rows, how far each is
from the exact answer), compile time cold (first call, empty kiln cache) and warm (a fresh torch.compile in
the same process, kiln's caches filled), and what kiln ran on the host.

    KILN_LIBRARY=lib/libkiln.so PYTHONPATH=python:tests/python \\
        python3 bench/models_gpu.py --config configs/nvidia.yaml
"""
import argparse
import copy
import os
import sys
import time
import warnings

import torch

from cuda_timing import median_ms


def first_call_s(make, args):
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn = make()
    with torch.no_grad():
        fn(*args)
    torch.cuda.synchronize()
    return fn, time.perf_counter() - start


def cases(dtype, batch):
    import models

    torch.manual_seed(0)
    ids = torch.randint(0, 50257, (batch, 128), device="cuda")
    mask = torch.ones(batch, 128, dtype=torch.int64, device="cuda")
    mask[:, 100:] = 0
    return [
        ("bert_base", models.BertEncoder(vocab=30522, hidden=768, heads=12, layers=12, max_len=512),
         (torch.randint(0, 30522, (batch, 128), device="cuda"), mask)),
        ("gpt2_small", models.Gpt2(vocab=50257, hidden=768, heads=12, layers=12, max_len=1024), (ids,)),
        ("mixer_block", models.MixerBlock(patches=196, channels=768),
         (torch.randn(batch, 196, 768, device="cuda", dtype=dtype),)),
        ("resnet18", models.ResNet18(width=64, classes=1000),
         (torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype),)),
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="configs/nvidia.yaml")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--runs", type=int, default=20)  # samples
    parser.add_argument("--per-sample", type=int, default=5)
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--models", default="")
    a = parser.parse_args()
    import kiln
    import kiln.dynamo as kd

    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, batch {a.batch}, "
          f"median of {a.runs} samples x {a.per_sample} calls", flush=True)
    print("| model | dtype | eager ms | inductor ms | kiln ms | eager/kiln | inductor/kiln | "
          "kiln - eager | eager - f32 | kiln - f32 | kiln compile cold s | warm s | inductor compile s | "
          "kiln graphs | host ops |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
    for dtype_name in a.dtypes.split(","):
        dtype = getattr(torch, dtype_name)
        for name, module, args in cases(dtype, a.batch):
            if a.models and name not in a.models.split(","):
                continue
            reference = copy.deepcopy(module).to("cuda", torch.float32).eval()
            module = module.to("cuda", dtype).eval()
            with torch.no_grad():
                exact = reference(*[t.float() if t.is_floating_point() else t for t in args]).float()
                del reference
                expected = module(*args)
                eager = median_ms(lambda: module(*args), a.runs, a.per_sample)
                torch._dynamo.reset()
                inductor_fn, inductor_s = first_call_s(lambda: torch.compile(module), args)
                inductor = median_ms(lambda: inductor_fn(*args), a.runs, a.per_sample)
                torch._dynamo.reset()
                kd.stats.reset()
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    options = {"config": a.config}
                    kiln_fn, cold_s = first_call_s(
                        lambda: torch.compile(module, backend=kiln.torch_backend, options=options), args)
                    torch._dynamo.reset()
                    kiln_fn, warm_s = first_call_s(
                        lambda: torch.compile(module, backend=kiln.torch_backend, options=options), args)
                got = kiln_fn(*args)
                diff = (got.float() - expected.float()).abs().max().item()
                eager_err = (expected.float() - exact).abs().max().item()
                kiln_err = (got.float() - exact).abs().max().item()
                kiln_ms = median_ms(lambda: kiln_fn(*args), a.runs, a.per_sample)
            host = sorted(kd.stats.host_ops)
            eager_notes = [str(w.message)[:80] for w in caught if "kiln:" in str(w.message)]
            print(f"| {name} | {dtype_name} | {eager:.3f} | {inductor:.3f} | {kiln_ms:.3f} | "
                  f"{eager / kiln_ms:.2f} | {inductor / kiln_ms:.2f} | {diff:.2e} | {eager_err:.2e} | "
                  f"{kiln_err:.2e} | {cold_s:.1f} | "
                  f"{warm_s:.1f} | {inductor_s:.1f} | {kd.stats.compiled} (+{len(kd.stats.eager)} eager) | "
                  f"{'; '.join(host) or '-'} {' '.join(eager_notes)} |", flush=True)
            del module
            torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
