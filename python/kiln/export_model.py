"""A model file to kiln.graph/1 and its weights, for `kiln bench` suites' `model:` entries.

A model file is Python that defines `model(size)`: it returns (torch.nn.Module, tuple of
example inputs) at a size class ("cpu", "gpu" or "small"). The module is put in eval mode,
exported (torch.export, Core ATen decompositions) and written as OUT.json and
OUT.safetensors.

    python3 -m kiln.export_model bench/models/mlp.py --size cpu --out /tmp/mlp

Exit status: 0 written; 3 PyTorch is not here; 1 the model failed (the reason on stderr)."""
import argparse
import importlib.util
import os
import sys


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m kiln.export_model")
    p.add_argument("file")
    p.add_argument("--size", default="cpu")
    p.add_argument("--out", required=True, help="path stem: writes OUT.json, OUT.safetensors")
    args = p.parse_args(argv)
    try:
        import torch
    except ImportError as e:
        print(f"no PyTorch for {sys.executable} ({e})", file=sys.stderr)
        return 3
    from . import exporter

    name = os.path.splitext(os.path.basename(args.file))[0]
    spec = importlib.util.spec_from_file_location(f"kiln_bench_model_{name}", args.file)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        torch.manual_seed(0)  # the same weights on every machine and shard
        net, example = module.model(args.size)
        net.eval()
        with torch.no_grad():
            exporter.save(net, example, args.out, name=name)
    except Exception as e:
        print(f"{args.file}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
