#!/usr/bin/env python3
"""Memory-bound workloads on the CPU: kiln (cpp_openmp through torch.compile(backend="kiln"))
against PyTorch eager and torch.compile's default backend (Inductor, C++), in one run, at
--threads threads for every contender, beside a copy of each workload's minimal bytes.

The anchor workloads at their CPU sizes (shared/bench/workloads.md) and shapes users meet
outside that set: sums and softmax over the outer dim, a sum over the middle dim of a 3-d
tensor, a transposed input, RoPE's slices and cat, a broadcast on the left side.

Per row: median ms per call over --runs calls after warm-up (wall time: a CPU call returns
when its work is done; eager, Inductor and kiln called in turn, the order rotated each
round), kiln GB/s (minimal bytes: inputs read once, outputs written once), kiln vs copy
(1.00 = at the copy's bandwidth), inductor/kiln and eager/kiln (above 1: kiln is faster),
and the largest difference from eager relative to eager's largest magnitude. Last,
the geometric means of the two ratios. With --tuned, kiln also runs with `autotune: {kernels:
exhaustive}` in the same run: its ms, inductor/tuned and heuristic/tuned (above 1: tuning
gained; below 1 by more than noise would be a loss the tuner must not allow), the last from
the heuristic and the tuned graph timed in alternation.

    KILN_LIBRARY=build/default/lib/libkiln.so PYTHONPATH=python python3 bench/cpu_compare.py
"""
import argparse
import os
import sys
import tempfile
import warnings

import torch
import torch.nn.functional as F

from compare_math import geomean, nbytes, rel_diff
from cpu_timing import config, interleaved_median_ms, median_ms, paired_median_ms
from wide_set import wide_workloads


def rms(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


def workloads(only, which):
    out = []

    def add(name, fn, args, outputs):
        if not only or any(o in name for o in only.split(",")):
            out.append((name, fn, args, outputs))

    if which in ("wide", "all"):
        for w in wide_workloads():
            add(*w)
    if which == "wide":
        return out

    randn = torch.randn
    s = randn(1 << 24)
    add("sin_cos_1d", lambda s: torch.sin(torch.cos(s)), (s,), [s])
    a, v = randn(2048, 8192), randn(8192)
    add("add_relu_mul_bcast", lambda a, v: torch.relu(a + v) * 2, (a, v), [a])
    t = randn(2048, 2048)
    add("transpose_add", lambda t: t + t.t(), (t,), [t])
    x, w, b = randn(8192, 1024), randn(1024), randn(1024)
    rows = torch.empty(8192)
    add("softmax", lambda x: torch.softmax(x, -1), (x,), [x])
    add("layernorm", lambda x, w, b: F.layer_norm(x, (1024,), w, b), (x, w, b), [x])
    add("rmsnorm", rms, (x, w), [x])
    add("rowsum", lambda x: x.sum(-1), (x,), [rows])
    logits = randn(1024, 50257).to(torch.bfloat16)
    labels = torch.randint(0, 50257, (1024,))
    add("cross_entropy", lambda l, y: F.cross_entropy(l.float(), y), (logits, labels),
        [torch.empty(())])
    # Beyond the anchor set.
    add("colsum", lambda x: x.sum(0), (x,), [torch.empty(1024)])
    add("softmax_dim0", lambda x: torch.softmax(x, 0), (x,), [x])
    c = randn(64, 512, 256)
    add("sum_middle_3d", lambda c: c.sum(1), (c,), [torch.empty(64, 256)])
    add("rowsum_transposed", lambda t: t.t().sum(-1), (t,), [torch.empty(2048)])
    q = randn(8, 1024, 128)
    cos, sin = randn(1024, 128), randn(1024, 128)
    add("rope", rope, (q, cos, sin), [q])
    col = randn(8192, 1)
    add("add_bcast_col", lambda x, col: x + col, (x, col), [x])
    return out


def kiln_compiled(fn, args, config):
    """fn through torch.compile(backend="kiln") with `config`, and its first outputs."""
    import kiln

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = torch.compile(fn, backend=kiln.torch_backend, options={"config": config})
        return compiled, compiled(*args)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--only", default="", help="comma-separated substrings of workload names")
    ap.add_argument("--set", choices=["anchor", "wide", "all"], default="anchor",
                    help="the anchor workloads and the shapes beside them, the wide set "
                         "(bench/wide_set.py), or both")
    ap.add_argument("--tuned", action="store_true",
                    help="also time kiln with autotune.kernels: exhaustive")
    ap.add_argument("--vector-width", default="auto",
                    help="the cpp_openmp plugin's vector_width (auto: the CPU's f32 lanes)")
    ap.add_argument("--touch-memory", type=float, default=0, metavar="GIB",
                    help="write this many GiB once before timing: a VM whose host backs guest "
                         "memory on first touch stalls fresh huge pages for ms otherwise")
    a = ap.parse_args()
    if a.touch_memory > 0:
        touched = torch.empty(int(a.touch_memory * 2**30), dtype=torch.uint8)
        touched.fill_(1)
        del touched
    torch.set_num_threads(a.threads)
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    import kiln.dynamo as kd

    cache = tempfile.mkdtemp(prefix="kiln-bench-cpu-")
    kiln_config = config(a.threads, cache, vector_width=a.vector_width)
    tuned_config = config(a.threads, cache, "autotune: {kernels: exhaustive, libraries: false}\n",
                          vector_width=a.vector_width)
    # kiln asks for huge pages on fresh outputs (run.huge_pages); PyTorch's allocator does
    # for every tensor when THP_MEM_ALLOC_ENABLE=1 is set before torch loads (eager and
    # Inductor then fault 2 MiB at a time as well): the header says which this run had.
    torch_thp = os.environ.get("THP_MEM_ALLOC_ENABLE", "0") not in ("", "0")
    print(f"cpu, {a.threads} threads, vector_width {a.vector_width}, torch {torch.__version__}, "
          f"torch huge pages {'on' if torch_thp else 'off'} (THP_MEM_ALLOC_ENABLE), "
          f"median of {a.runs} calls, {a.touch_memory:g} GiB touched first; "
          f"kiln cache {cache} (fresh)", flush=True)
    tuned_head = " tuned ms | inductor/tuned | heuristic/tuned |" if a.tuned else ""
    print("| workload | eager ms | inductor ms | kiln ms | kiln GB/s | kiln vs copy "
          "| inductor/kiln | eager/kiln | max rel diff |" + tuned_head)
    print("|---|---|---|---|---|---|---|---|---|" + ("---|---|---|" if a.tuned else ""),
          flush=True)
    vs_inductor, vs_eager, tuned_vs_inductor, tuned_gain = [], [], [], []
    with torch.no_grad():
        for name, fn, args, outputs in workloads(a.only, a.set):
            moved = nbytes(args) + nbytes(outputs)
            src = torch.empty(moved // 2, dtype=torch.uint8)
            dst = torch.empty_like(src)
            copy = median_ms(lambda: dst.copy_(src), a.runs)
            expected = fn(*args)
            torch._dynamo.reset()
            kd.stats.reset()
            kiln_fn, got = kiln_compiled(fn, args, kiln_config)
            if kd.stats.eager:
                print(f"  {name}: ran eagerly: {kd.stats.eager}", file=sys.stderr)
            rel = rel_diff(got, expected)
            inductor_fn = torch.compile(fn)
            inductor_fn(*args)
            # Both compiled functions stay cached side by side (each entry guards its
            # backend); a recompile while timing would time the compiler: it fails instead.
            with torch._dynamo.config.patch(error_on_recompile=True):
                eager, inductor, ms = interleaved_median_ms(
                    [lambda: fn(*args), lambda: inductor_fn(*args), lambda: kiln_fn(*args)],
                    a.runs)
            vs_inductor.append(inductor / ms)
            vs_eager.append(eager / ms)
            tuned_cells = ""
            if a.tuned:
                torch._dynamo.reset()
                tuned_fn, tuned_got = kiln_compiled(fn, args, tuned_config)
                rel = max(rel, rel_diff(tuned_got, expected))
                # The heuristic and the tuned graph in alternation: their ratio is what
                # tuning gained, free of the machine's drift between two separate timings.
                ms_paired, tuned = paired_median_ms(lambda: kiln_fn(*args),
                                                    lambda: tuned_fn(*args), a.runs)
                ms_ratio = ms_paired / tuned
                tuned_vs_inductor.append(inductor / tuned)
                tuned_gain.append(ms_ratio)
                tuned_cells = f" {tuned:.3f} | {inductor / tuned:.2f} | {ms_ratio:.2f} |"
            print(f"| {name} | {eager:.3f} | {inductor:.3f} | {ms:.3f} | {moved / ms / 1e6:.1f} | "
                  f"{copy / ms:.2f} | {inductor / ms:.2f} | {eager / ms:.2f} | {rel:.1e} |" +
                  tuned_cells, flush=True)

    print(f"\ngeomean inductor/kiln {geomean(vs_inductor):.2f}, eager/kiln {geomean(vs_eager):.2f} "
          f"over {len(vs_inductor)} workloads")
    if a.tuned:
        print(f"geomean inductor/tuned {geomean(tuned_vs_inductor):.2f}, heuristic/tuned "
              f"{geomean(tuned_gain):.2f} (lowest {min(tuned_gain):.2f})")


if __name__ == "__main__":
    sys.exit(main())
