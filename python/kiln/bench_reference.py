"""A `kiln bench` reference cell: one kiln.graph/1 graph run by PyTorch — eager, or
torch.compile (Inductor, default or max-autotune) — on the inputs kiln's cell used, timed by
kiln's protocol (one warm-up run, then RUNS samples of RUNS_PER_SAMPLE runs back to back:
CUDA events on a GPU, wall time on the CPU), its outputs written for kiln to check against
its reference.

    python3 -m kiln.bench_reference --graph G.json --inputs IN.safetensors --mode eager \\
        --device cpu --runs 20 --result OUT.json [--weights W.safetensors] \\
        [--outputs OUT.safetensors] [--threads N] [--compile-cache DIR]

Exit status: 0 measured; 3 PyTorch (or the device) is not here, so the cell is skipped;
1 the graph failed. Either way OUT.json says what happened ({"error": ...} or
{"skipped": ...})."""
import argparse
import json
import os
import sys
import time

SKIPPED = 3
MODES = ("eager", "compile", "max-autotune")


def _parse(argv):
    p = argparse.ArgumentParser(prog="python3 -m kiln.bench_reference")
    p.add_argument("--graph", required=True)
    p.add_argument("--weights")
    p.add_argument("--inputs", required=True)
    p.add_argument("--outputs")
    p.add_argument("--mode", choices=MODES, required=True)
    p.add_argument("--device", default="cpu")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--runs-per-sample", type=int, default=1)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--compile-cache", help="Inductor's and Triton's cache (empty: compile cold)")
    p.add_argument("--result", required=True)
    return p.parse_args(argv)


def _write(path, result):
    with open(path, "w") as f:
        json.dump(result, f)


class _Clock:
    """Milliseconds between two marks: CUDA events on a GPU (device time, as kiln times a
    GPU), the wall clock on the CPU (a CPU call returns when its work is done)."""

    def __init__(self, torch, device):
        self.torch = torch
        self.cuda = device.type == "cuda"

    def span(self, fn):
        if self.cuda:
            start = self.torch.cuda.Event(enable_timing=True)
            end = self.torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end)
        begin = time.perf_counter()
        fn()
        return (time.perf_counter() - begin) * 1e3


def _measure(args, torch):
    from . import safetensors, torch_graph

    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        return SKIPPED, {"skipped": f"PyTorch {torch.__version__} sees no CUDA device"}
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    with open(args.graph) as f:
        doc = json.load(f)
    params = safetensors.read(args.weights) if args.weights else {}
    graph = torch_graph.build(doc, params, device)
    inputs = torch_graph.make_inputs(doc, safetensors.read(args.inputs), device)
    clock = _Clock(torch, device)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    # The weights are arguments, as a module's are to torch.compile: guarded, not baked in.
    arguments = [*graph.params, *inputs]
    fn, cold_ms, warm_ms = graph.fn, 0.0, 0.0
    # max-autotune replays CUDA graphs, whose outputs the next replay overwrites: each call
    # starts a new step, and outputs kept for the check are copies.
    mark_step = (getattr(torch.compiler, "cudagraph_mark_step_begin", None)
                 if args.mode == "max-autotune" else None)

    def call():
        if mark_step:
            mark_step()
        return fn(*arguments)

    if args.mode != "eager":
        mode = "max-autotune" if args.mode == "max-autotune" else None

        def first_call():
            compiled = torch.compile(graph.fn, mode=mode, fullgraph=False)
            begin = time.perf_counter()
            with torch.no_grad():
                if mark_step:
                    mark_step()
                compiled(*arguments)
            sync()
            return compiled, (time.perf_counter() - begin) * 1e3

        fn, cold_ms = first_call()
        # Warm: compiled again in this process after Dynamo forgets it, Inductor's caches full.
        torch._dynamo.reset()
        fn, warm_ms = first_call()
    with torch.no_grad():
        outputs = [t.clone() for t in call()]  # the warm-up run
        sync()
        samples = []
        for _ in range(args.runs):
            def burst():
                for _ in range(args.runs_per_sample):
                    call()
            samples.append(clock.span(burst) / args.runs_per_sample)
    if args.outputs:
        safetensors.write(args.outputs, {f"out{i}": t for i, t in enumerate(outputs)})
    name = (torch.cuda.get_device_name(device) if device.type == "cuda"
            else f"{torch.get_num_threads()} threads")
    return 0, {"samples_ms": samples, "compile_cold_ms": cold_ms, "compile_warm_ms": warm_ms,
               "device": f"torch {torch.__version__} {device} ({name})"}


def main(argv=None):
    args = _parse(argv if argv is not None else sys.argv[1:])
    if args.compile_cache:
        # Set before torch loads: a cold compile is cold, and the cell leaves no cache behind.
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(args.compile_cache, "inductor")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(args.compile_cache, "triton")
    try:
        import torch
    except ImportError as e:
        _write(args.result, {"skipped": f"no PyTorch for {sys.executable} ({e})"})
        return SKIPPED
    try:
        status, result = _measure(args, torch)
    except Exception as e:  # the cell's error, for its row; never a traceback to the table
        # The first line: a table cell, not PyTorch's whole explanation.
        first = next((line for line in str(e).splitlines() if line.strip()), "")
        status, result = 1, {"error": f"{type(e).__name__}: {first.strip()}"[:300]}
    _write(args.result, result)
    return status


if __name__ == "__main__":
    sys.exit(main())
