#!/usr/bin/env python3
"""Single ops users meet in CNNs and training graphs (convolution, pooling, cumsum, topk over
a vocabulary, an embedding gradient's scatter-add, the scatter family, embedding bags, dropout
and randn, FFTs), on one GPU: kiln (torch.compile with
backend="kiln", the ptx plugin) against eager PyTorch (cuDNN for convolutions) and
torch.compile's default backend (Inductor), measured in one run. ResNet shapes at batch 16.

Per row: median ms over --runs samples of --per-sample calls between CUDA events (after
warm-up, cuda_timing.py), eager/kiln and inductor/kiln (above 1: kiln is faster), the largest
difference from eager relative to eager's largest magnitude, and what kiln ran on the host.

    KILN_LIBRARY=lib/libkiln.so PYTHONPATH=python python3 bench/ops_gpu.py --config configs/nvidia.yaml
"""
import argparse
import sys
import warnings

import torch
import torch.nn.functional as F

from cuda_timing import median_ms


def cases(only):
    dev = "cuda"
    out = []

    def add(name, fn, *args):
        if not only or any(o in name for o in only.split(",")):
            out.append((name, fn, args))

    for dtype, tag in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        def randn(*s):
            return torch.randn(*s, device=dev, dtype=dtype)

        for layout, fmt in (("nchw", torch.contiguous_format), ("nhwc", torch.channels_last)):
            x = randn(16, 64, 56, 56).to(memory_format=fmt)
            w3 = randn(64, 64, 3, 3).to(memory_format=fmt)
            add(f"conv3x3_64_56_{tag}_{layout}", lambda x, w: F.conv2d(x, w, padding=1), x, w3)
            x2 = randn(16, 256, 56, 56).to(memory_format=fmt)
            w1 = randn(64, 256, 1, 1).to(memory_format=fmt)
            add(f"conv1x1_256to64_56_{tag}_{layout}", lambda x, w: F.conv2d(x, w), x2, w1)
        # A U-Net decoder's up-convolutions (2x2 stride 2) and a GAN's (4x4 stride 2 pad 1).
        xu = randn(16, 128, 28, 28)
        add(f"convT2x2s2_128to64_28_{tag}", lambda x, w: F.conv_transpose2d(x, w, stride=2),
            xu, randn(128, 64, 2, 2))
        add(f"convT4x4s2p1_128to64_28_{tag}",
            lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1), xu, randn(128, 64, 4, 4))
        xd = randn(16, 128, 56, 56)
        wd = randn(128, 1, 3, 3)
        add(f"depthwise3x3_128_56_{tag}", lambda x, w: F.conv2d(x, w, padding=1, groups=128), xd, wd)
        xp = randn(16, 64, 112, 112)
        add(f"max_pool3x3s2_{tag}", lambda x: F.max_pool2d(x, 3, 2, 1), xp)
        add(f"avg_pool_global_{tag}", lambda x: F.adaptive_avg_pool2d(x, 1), randn(16, 512, 7, 7))
        add(f"cumsum_4096x4096_{tag}", lambda x: torch.cumsum(x, 1), randn(4096, 4096))
        add(f"cumsum_dim0_4096x4096_{tag}", lambda x: torch.cumsum(x, 0), randn(4096, 4096))
        add(f"cumprod_64x32768_{tag}", lambda x: torch.cumprod(x, 1), 1 + randn(64, 32768) / 1e3)
        add(f"topk50_8x50257_{tag}", lambda x: torch.topk(x, 50, 1)[0], randn(8, 50257))
        # Top-p sampling sorts the vocabulary.
        add(f"sort_desc_8x50257_{tag}", lambda x: torch.sort(x, 1, descending=True)[0],
            randn(8, 50257))
        # Shapes beyond the vocabulary: a mixture-of-experts router (top 2 of 64 experts for
        # 16384 tokens), top-k sampling over a 128256-word vocabulary, and one long vector
        # sorted (values compared: ties may order differently).
        add(f"topk2_16384x64_{tag}", lambda x: torch.topk(x, 2, 1)[0], randn(16384, 64))
        add(f"topk50_4x128256_{tag}", lambda x: torch.topk(x, 50, 1)[0], randn(4, 128256))
        add(f"sort_1048576_{tag}", lambda x: torch.sort(x)[0], randn(1 << 20))
        # An embedding gradient (GPT-2 small, 4096 tokens): scatter-add rows into the table.
        ids = torch.randint(0, 50257, (4096,), device=dev)
        add(f"embedding_grad_scatter_add_{tag}",
            lambda g, i=ids: torch.zeros(50257, 768, device=dev, dtype=g.dtype).index_add_(0, i, g),
            randn(4096, 768))
        # The scatter family and embedding bags (atomics), and random draws (Philox per element).
        cols = torch.randint(0, 1024, (4096, 256), device=dev)
        add(f"scatter_add_4096x1024_{tag}", lambda x, s, c=cols: x.scatter_add(1, c, s),
            randn(4096, 1024), randn(4096, 256))
        add(f"scatter_reduce_amax_4096x1024_{tag}",
            lambda x, s, c=cols: x.scatter_reduce(1, c, s, "amax", include_self=False),
            randn(4096, 1024), randn(4096, 256))
        bags = torch.randint(0, 50257, (8192,), device=dev)
        offsets = torch.arange(0, 8192, 32, device=dev)
        add(f"embedding_bag_sum_256x32_{tag}",
            lambda w, b=bags, o=offsets: F.embedding_bag(b, w, o, mode="sum"), randn(50257, 768))
        add(f"random_dropout_8192x4096_{tag}", lambda x: F.dropout(x, 0.1, training=True),
            randn(8192, 4096))
        add(f"random_randn_4096x4096_{tag}",
            lambda x: torch.randn(4096, 4096, device=dev, dtype=x.dtype) + x, randn(4096, 4096))
    # FFTs (complex64 from f32 signals; kiln's are DFT matrix products, cuFFT's O(N log N)):
    # a magnitude spectrum, Whisper's power spectrogram (n_fft 400, hop 160, 30 s at 16 kHz,
    # batch 8), and a Fourier layer's round trip with complex weights.
    f32 = dict(device=dev, dtype=torch.float32)
    add("fft_rfft_abs_4096x512_f32", lambda x: torch.fft.rfft(x).abs(), torch.randn(4096, 512, **f32))
    window = torch.hann_window(400, **f32)
    add("fft_stft_power_8x480000_f32",
        lambda x, w=window: torch.stft(x, 400, 160, window=w, return_complex=True).abs().pow(2),
        torch.randn(8, 480000, **f32))
    weights = torch.randn(64, 33, device=dev, dtype=torch.complex64)
    add("fft_fourier_layer_16x32x64x64_f32",
        lambda x, w=weights: torch.fft.irfft2(torch.fft.rfft2(x) * w, s=x.shape[-2:]),
        torch.randn(16, 32, 64, 64, **f32))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/nvidia.yaml")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--per-sample", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated substrings of case names")
    a = ap.parse_args()
    import kiln
    import kiln.dynamo as kd

    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"median of {a.runs} samples x {a.per_sample} calls", flush=True)
    print("| op | eager ms | inductor ms | kiln ms | eager/kiln | inductor/kiln | kiln vs eager | host ops |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    with torch.no_grad():
        for name, fn, args in cases(a.only):
            expected = fn(*args)
            eager = median_ms(lambda: fn(*args), a.runs, a.per_sample)
            torch._dynamo.reset()
            inductor_fn = torch.compile(fn)
            inductor = median_ms(lambda: inductor_fn(*args), a.runs, a.per_sample)
            torch._dynamo.reset()
            kd.stats.reset()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kiln_fn = torch.compile(fn, backend=kiln.torch_backend, options={"config": a.config})
                got = kiln_fn(*args)
            # Random draws differ from eager's by design (another generator): no comparison.
            rel = float("nan") if name.startswith("random_") else (
                (got.float() - expected.float()).abs().max() / expected.float().abs().max()).item()
            ms = median_ms(lambda: kiln_fn(*args), a.runs, a.per_sample)
            host = "; ".join(sorted(kd.stats.host_ops)) or "-"
            eager_ops = f" (eager: {kd.stats.eager})" if kd.stats.eager else ""
            print(f"| {name} | {eager:.3f} | {inductor:.3f} | {ms:.3f} | {eager / ms:.2f} | "
                  f"{inductor / ms:.2f} | {rel:.1e} | {host}{eager_ops} |", flush=True)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
