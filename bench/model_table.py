#!/usr/bin/env python3
"""One row of the model table (docs/models.md): a whole model on one GPU through
torch.compile(backend="kiln") against eager PyTorch and torch.compile's Inductor in its default
and max-autotune modes, measured in one process.

Models (tests/python/models.py, the originals' widths and depths, random weights): ResNet-18
and ResNet-50 (batch 16, 224x224), BERT-base (batch 8, sequence 512, padding mask), GPT-2
small (batch 8, sequence 1024, causal) forward, and GPT-2 small's training step (forward,
cross-entropy over the next token, backward; no optimizer). BERT and GPT-2 write attention
out (scores, softmax, product); their _sdpa rows call F.scaled_dot_product_attention instead,
as Hugging Face's models do by default. Forward rows run in inference
mode (no_grad, eval).

Per row: median ms per call over --runs samples of --per-sample calls between CUDA events
after warm-up (eager with PyTorch's defaults); eager/kiln, inductor/kiln and
max-autotune/kiln; kiln's largest difference from eager relative to eager's largest value (for
the training step over every weight's gradient); compile seconds: kiln cold (first call, the
caches as the caller left them: bench/model_table.sh gives each row an empty one), kiln warm (a
fresh torch.compile in the same process) and each Inductor mode's first call. With --profile N,
the N kernels taking the most GPU time in kiln's calls (torch.profiler) follow the row, then
those of each Inductor mode's calls, so a gap can be put on kernels.

    KILN_LIBRARY=lib/libkiln.so PYTHONPATH=python:tests/python:bench \\
        python3 bench/model_table.py --model bert_base --dtype bfloat16 --config configs/nvidia.yaml
"""
import argparse
import copy
import sys
import time
import warnings

import torch
import torch.nn.functional as F

from cuda_timing import kernel_us_per_call, median_ms

HEADER = ("| model | dtype | eager ms | inductor ms | max-autotune ms | kiln ms | eager/kiln | "
          "inductor/kiln | max-autotune/kiln | kiln vs eager (rel) | kiln compile cold s | "
          "warm s | inductor compile s | max-autotune compile s | kiln graphs | host ops |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def build(name, dtype, batch):
    """(module, inputs, training) for a row, seeded."""
    import models

    torch.manual_seed(0)
    if name in ("resnet18", "resnet50"):
        net = (models.ResNet18 if name == "resnet18" else models.ResNet50)(width=64, classes=1000)
        return net, (torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype),), False
    sdpa = name.endswith("_sdpa")
    name = name.removesuffix("_sdpa")
    if name == "bert_base":
        mask = torch.ones(batch, 512, dtype=torch.int64, device="cuda")
        mask[:, 400:] = 0
        net = models.BertEncoder(vocab=30522, hidden=768, heads=12, layers=12, max_len=512,
                                 sdpa=sdpa)
        return net, (torch.randint(0, 30522, (batch, 512), device="cuda"), mask), False
    if name in ("gpt2_small", "gpt2_small_train"):
        net = models.Gpt2(vocab=50257, hidden=768, heads=12, layers=12, max_len=1024, sdpa=sdpa)
        ids = torch.randint(0, 50257, (batch, 1024), device="cuda")
        return net, (ids,), name.endswith("_train")
    raise SystemExit(f"unknown model '{name}'")


def next_token_loss(logits, ids):
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]).float(),
                           ids[:, 1:].reshape(-1))


def make_call(fn, module, args, training):
    """A call as users make it: inference under no_grad, or a training step."""
    if not training:
        def infer():
            with torch.no_grad():
                return fn(*args)
        return infer

    def step():
        module.zero_grad(set_to_none=True)
        loss = next_token_loss(fn(*args), args[0])
        loss.backward()
        return loss
    return step


def result_of(module, call, training):
    out = call()
    if not training:
        return [out.float()]
    return [p.grad.float() for p in module.parameters() if p.grad is not None]


def timed_first_call(make):
    torch.cuda.synchronize()
    start = time.perf_counter()
    call = make()
    call()
    torch.cuda.synchronize()
    return call, time.perf_counter() - start


def top_kernels(call, count):
    """The `count` GPU kernels taking the most time over five calls, as 'name: ms per call'."""
    call()
    torch.cuda.synchronize()
    totals = {name: us / 1000.0 for name, us in kernel_us_per_call(call, 5).items()}
    ranked = sorted(totals.items(), key=lambda kv: -kv[1])
    whole = sum(totals.values())
    lines = [f"    GPU time per call, all kernels: {whole:.3f} ms"]
    lines += [f"    {ms:.3f} ms  {name[:110]}" for name, ms in ranked[:count]]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True,
                    help="resnet18 resnet50 bert_base gpt2_small gpt2_small_train; bert_base_sdpa "
                         "and gpt2_small_sdpa: attention through F.scaled_dot_product_attention")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--batch", type=int, default=0, help="0: the table's (16 ResNets, 8 others)")
    ap.add_argument("--config", default="configs/nvidia.yaml")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--per-sample", type=int, default=3)
    ap.add_argument("--modes", default="default,max-autotune", help="Inductor modes to run")
    ap.add_argument("--profile", type=int, default=0)
    ap.add_argument("--header", action="store_true")
    a = ap.parse_args()
    import kiln
    import kiln.dynamo as kd

    if a.header:
        print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, median of "
              f"{a.runs} samples x {a.per_sample} calls\n{HEADER}", flush=True)
    dtype = getattr(torch, a.dtype)
    batch = a.batch or (16 if a.model.startswith("resnet") else 8)
    base, args, training = build(a.model, dtype, batch)
    base = base.to("cuda", dtype)
    base.train(training)
    times, compile_s, profiles = {}, {}, {}

    eager_module = copy.deepcopy(base)
    eager_call = make_call(eager_module, eager_module, args, training)
    expected = result_of(eager_module, eager_call, training)
    times["eager"] = median_ms(eager_call, a.runs, a.per_sample)
    del eager_module
    for mode in [m for m in a.modes.split(",") if m]:
        torch._dynamo.reset()
        module = copy.deepcopy(base)
        fn = torch.compile(module, mode=None if mode == "default" else mode)
        call, compile_s[mode] = timed_first_call(lambda: make_call(fn, module, args, training))
        times[mode] = median_ms(call, a.runs, a.per_sample)
        if a.profile:
            profiles[mode] = top_kernels(call, a.profile)
        del module, fn, call
        torch.cuda.empty_cache()

    torch._dynamo.reset()
    kd.stats.reset()
    options = {"config": a.config}
    module = copy.deepcopy(base)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn = torch.compile(module, backend=kiln.torch_backend, options=options)
        call, compile_s["kiln cold"] = timed_first_call(lambda: make_call(fn, module, args, training))
        graphs = kd.stats.compiled  # the warm compile below counts them again
        torch._dynamo.reset()
        fn = torch.compile(module, backend=kiln.torch_backend, options=options)
        call, compile_s["kiln warm"] = timed_first_call(lambda: make_call(fn, module, args, training))
    got = result_of(module, call, training)
    if len(got) != len(expected):
        raise SystemExit(f"{len(got)} results from kiln, {len(expected)} from eager")
    scale = max(e.abs().max().item() for e in expected)
    diff = max((g - e).abs().max().item() for g, e in zip(got, expected)) / scale
    kiln_ms = median_ms(call, a.runs, a.per_sample)

    def ratio(mode):
        return f"{times[mode] / kiln_ms:.2f}" if mode in times else "-"

    def ms(mode):
        return f"{times[mode]:.3f}" if mode in times else "-"

    def secs(mode):
        return f"{compile_s[mode]:.1f}" if mode in compile_s else "-"

    notes = " ".join(str(w.message)[:80] for w in caught if "kiln:" in str(w.message))
    host = "; ".join(sorted(kd.stats.host_ops)) or "-"
    name = a.model.replace("_train", " train step")
    print(f"| {name} | {a.dtype} | {ms('eager')} | {ms('default')} | {ms('max-autotune')} | "
          f"{kiln_ms:.3f} | {ratio('eager')} | {ratio('default')} | {ratio('max-autotune')} | "
          f"{diff:.1e} | {secs('kiln cold')} | {secs('kiln warm')} | {secs('default')} | "
          f"{secs('max-autotune')} | {graphs} (+{len(kd.stats.eager)} eager) | "
          f"{host} {notes} |", flush=True)
    if a.profile:
        print(top_kernels(call, a.profile), flush=True)
        for mode, kernels in profiles.items():
            print(f"    Inductor ({mode}):\n{kernels}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
