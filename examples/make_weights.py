#!/usr/bin/env python3
"""Writes the example models' weights (<example>.safetensors) from a fixed seed.

Run from anywhere: python3 examples/make_weights.py. Needs numpy only."""
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    for path in sorted(os.listdir(HERE)):
        if not path.endswith(".json"):
            continue
        graph = json.load(open(os.path.join(HERE, path)))
        params = graph.get("params", [])
        if not params:
            continue
        rng = np.random.default_rng(20261122)
        tensors = {}
        for p in params:
            shape = p["shape"]
            fan_in = shape[-1] if len(shape) > 1 else 1
            if p["name"].endswith("weight") and len(shape) == 1:
                tensors[p["name"]] = 1.0 + 0.1 * rng.standard_normal(shape)  # norm scales near 1
            else:
                tensors[p["name"]] = rng.standard_normal(shape) / np.sqrt(fan_in)
        out = os.path.join(HERE, path[:-5] + ".safetensors")
        write_safetensors(out, tensors)
        print("wrote", os.path.relpath(out))


if __name__ == "__main__":
    sys.exit(main())
