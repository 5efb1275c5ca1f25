#!/usr/bin/env python3
"""A training step (forward, a mean-square loss, backward: the gradients of every weight) of
ResNet-18 (tests/python/models.py, width 64, 224x224 images) on one GPU through
torch.compile(backend="kiln") (the ptx plugin: the backward graph's convolution gradients are
cuDNN calls), against eager PyTorch and torch.compile's default backend (Inductor), measured in
one run.

Per row: median ms per step over --runs samples of --per-sample steps between CUDA events
(after warm-up; eager as users run it, TF32 convolutions allowed), eager/kiln and
inductor/kiln, the largest difference of kiln's weight gradients from eager's with TF32 off
(kiln's f32 is strict f32), relative to eager's largest gradient, and what kiln ran on the
host or left to eager.

    KILN_LIBRARY=lib/libkiln.so PYTHONPATH=python:tests/python:bench \\
        python3 bench/train_gpu.py --config configs/nvidia.yaml
"""
import argparse
import copy
import sys
import warnings

import torch

from cuda_timing import median_ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/nvidia.yaml")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--per-sample", type=int, default=3)
    ap.add_argument("--dtypes", default="float32,bfloat16")
    a = ap.parse_args()
    import kiln
    import kiln.dynamo as kd
    import models

    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, batch {a.batch}, "
          f"median of {a.runs} samples x {a.per_sample} steps", flush=True)
    print("| model | dtype | eager ms | inductor ms | kiln ms | eager/kiln | inductor/kiln | "
          "grad diff | kiln graphs | host ops |")
    print("|---|---|---|---|---|---|---|---|---|---|", flush=True)
    for dtype_name in a.dtypes.split(","):
        dtype = getattr(torch, dtype_name)
        torch.manual_seed(0)
        base = models.ResNet18(width=64, classes=1000).to("cuda", dtype).train()
        x = torch.randn(a.batch, 3, 224, 224, device="cuda", dtype=dtype)

        def stepper(fn, module):
            def step():
                module.zero_grad(set_to_none=True)
                fn(x).float().square().mean().backward()
            return step

        def grads(module):
            return [p.grad.float() for p in module.parameters()]

        eager_module = copy.deepcopy(base)
        eager_step = stepper(eager_module, eager_module)
        tf32 = torch.backends.cudnn.allow_tf32
        torch.backends.cudnn.allow_tf32 = False
        eager_step()
        expected = grads(eager_module)
        torch.backends.cudnn.allow_tf32 = tf32
        eager = median_ms(eager_step, a.runs, a.per_sample)
        torch._dynamo.reset()
        ind_module = copy.deepcopy(base)
        inductor = median_ms(stepper(torch.compile(ind_module), ind_module), a.runs, a.per_sample)
        torch._dynamo.reset()
        kd.stats.reset()
        kiln_module = copy.deepcopy(base)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kiln_fn = torch.compile(kiln_module, backend=kiln.torch_backend,
                                    options={"config": a.config})
            kiln_step = stepper(kiln_fn, kiln_module)
            kiln_step()
        got = grads(kiln_module)
        scale = max(e.abs().max().item() for e in expected)
        diff = max((g - e).abs().max().item() for g, e in zip(got, expected)) / scale
        ms = median_ms(kiln_step, a.runs, a.per_sample)
        notes = [str(w.message)[:80] for w in caught if "kiln:" in str(w.message)]
        host = "; ".join(sorted(kd.stats.host_ops)) or "-"
        print(f"| resnet18 train step | {dtype_name} | {eager:.3f} | {inductor:.3f} | {ms:.3f} | "
              f"{eager / ms:.2f} | {inductor / ms:.2f} | {diff:.1e} | "
              f"{kd.stats.compiled} (+{len(kd.stats.eager)} eager) | {host} {' '.join(notes)} |",
              flush=True)
        del eager_module, ind_module, kiln_module
        torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
