#!/usr/bin/env python3
"""The ptx plugin's own convolution kernel (cuDNN off) in each block tile and reduction split
(the `conv_tile` and `conv_splits` options) against cuDNN (eager PyTorch) on one GPU, by
kernel time in one run: the 3x3 convolutions of ResNet-18/34 at batch 16 (each stage, and the
strided first convolution of a stage), f32 and bf16, NCHW and channels-last. Per case and
variant: the own kernels' µs per call (kiln_conv and, for a split reduction,
kiln_conv_finish; NCHW inputs also pay a copy to channels-last, counted in `all`), and
cuDNN's µs over it; per case, the largest difference from cuDNN's output over all variants,
relative to its largest magnitude (both use TF32 for f32, PyTorch's default for
convolutions). A variant is `auto` (what the plugin picks without the options) or options
such as `tile=128x64x3` and `splits=1`, joined by `+`.

    KILN_LIBRARY=lib/libkiln.so PYTHONPATH=python:bench python3 bench/conv_tiles.py
"""
import argparse
import re
import tempfile
import warnings

import torch
import torch.nn.functional as F

from kernel_times import device_us

VARIANTS = ["auto", "tile=128x64x3", "splits=1", "tile=128x64x4", "tile=128x128x3",
            "tile=256x64x3x64", "tile=128x128x3+splits=1"]
# (channels in, channels out, input size, stride): ResNet-18/34's 3x3 convolutions.
SHAPES = [(64, 64, 56, 1), (64, 128, 56, 2), (128, 128, 28, 1), (128, 256, 28, 2),
          (256, 256, 14, 1), (512, 512, 7, 1)]


def kernel_us(fn, args, calls):
    """Device µs per call: every kernel, and the own convolution kernels alone."""
    times = device_us(fn, args, calls)
    # kiln_conv and kiln_conv_finish
    return sum(us for _, us in times), sum(us for key, us in times if "kiln_conv" in key)


def config_with(base, variant):
    text = open(base).read()
    option = 'cudnn: "off"'
    if variant != "auto":
        for item in variant.split("+"):
            key, value = item.split("=")
            option += f", conv_{key}: {value}"
    text, n = re.subn(r"cublas_prefetch: true }", f"cublas_prefetch: true, {option} }}", text)
    if n != 1:
        raise SystemExit(f"{base}: no ptx options line to add {option} to")
    f = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    f.write(text)
    f.close()
    return f.name


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/nvidia.yaml")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--only", default="", help="cases whose name contains this (for a profiler)")
    a = ap.parse_args()
    import kiln

    variants = a.variants.split(",")
    configs = {v: config_with(a.config, v) for v in variants}
    print("case," + ",".join(f"{v} us,{v} all,cudnn/{v}" for v in variants) + ",cudnn us,max err")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dtype, tag in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
            for layout, fmt in (("nchw", torch.contiguous_format),
                                ("nhwc", torch.channels_last)):
                for c, k, size, stride in SHAPES:
                    name = f"conv3x3_{c}to{k}_{size}_s{stride}_{tag}_{layout}"
                    if a.only not in name:
                        continue
                    x = torch.randn(16, c, size, size, device="cuda", dtype=dtype)
                    w = torch.randn(k, c, 3, 3, device="cuda", dtype=dtype) / (3 * c**0.5)
                    x, w = x.to(memory_format=fmt), w.to(memory_format=fmt)

                    def fn(x, w, stride=stride):
                        return F.conv2d(x, w, stride=stride, padding=1)

                    cudnn, _ = kernel_us(fn, (x, w), a.calls)
                    expected = fn(x, w).float()
                    scale = expected.abs().max().item()
                    err = 0.0
                    row = [name]
                    for v in variants:
                        torch._dynamo.reset()
                        compiled = torch.compile(fn, backend=kiln.torch_backend,
                                                 options={"config": configs[v]})
                        total, own = kernel_us(compiled, (x, w), a.calls)
                        diff = (compiled(x, w).float() - expected).abs().max().item()
                        err = max(err, diff / scale)
                        row += [f"{own:.1f}", f"{total:.1f}",
                                f"{cudnn / own:.2f}" if own else "-"]
                    print(",".join(row + [f"{cudnn:.1f}", f"{err:.1e}"]), flush=True)
                    torch._dynamo.reset()
                    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
