#!/usr/bin/env python3
"""The GPU kernels inside one convolution call, eager PyTorch against torch.compile with
backend="kiln" (the ptx plugin), as torch.profiler sees them (CUPTI sees kiln's launches and
cuDNN's inside them): device time per call of each kernel, over 10 calls after warm-up.
Says which kernels a library chose and what kiln adds around them; times in the table of
ops_gpu.py, not here.

    KILN_LIBRARY=lib/libkiln.so PYTHONPATH=python python3 bench/conv_kernels.py --config configs/nvidia.yaml
"""
import argparse

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

import kiln


def kernels(name, label, fn, args, calls=10):
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(calls):
            fn(*args)
        torch.cuda.synchronize()
    for e in p.key_averages():
        if e.device_time_total > 0:
            print(f"  {name} {label} {e.key[:110]}: {e.device_time_total / calls:.1f} us")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/nvidia.yaml")
    a = ap.parse_args()
    for dtype, tag in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        for layout, fmt in (("nchw", torch.contiguous_format), ("nhwc", torch.channels_last)):
            def randn(*s):
                return torch.randn(*s, dtype=dtype, device="cuda").to(memory_format=fmt)
            for name, fn, args in (
                    (f"conv3x3_{tag}_{layout}", lambda x, w: F.conv2d(x, w, padding=1),
                     (randn(16, 64, 56, 56), randn(64, 64, 3, 3))),
                    (f"conv1x1_{tag}_{layout}", lambda x, w: F.conv2d(x, w),
                     (randn(16, 256, 56, 56), randn(64, 256, 1, 1)))):
                kernels(name, "eager", fn, args)
                compiled = torch.compile(fn, backend=kiln.torch_backend,
                                         options={"config": a.config})
                kernels(name, "kiln", compiled, args)
                torch._dynamo.reset()


if __name__ == "__main__":
    main()
