#!/usr/bin/env python3
"""Runs every example through `kiln run --backend BACKEND` (default: reference, the
interpreter; or a plugin's name) and checks the outputs against the same model written
independently in numpy (float64).

usage: check_examples.py KILN_BINARY EXAMPLES_DIR WORK_DIR [BACKEND]"""
import json
import math
import os
import struct
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("FAIL: numpy is missing; scripts/install-deps.sh installs python3-numpy")
    sys.exit(1)

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}
NAMES = {v: k for k, v in DTYPES.items()}


def read_safetensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        raw = data[8 + n + begin:8 + n + end]
        out[name] = np.frombuffer(raw, dtype=DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return out


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": NAMES[array.dtype.type], "shape": list(array.shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def linear(x, w, b):
    return x @ w.T + b


def expected(name, inputs, w):
    x = inputs.get("x")
    if name == "softmax":
        return softmax(x)
    if name == "layernorm":
        return layer_norm(x, w["weight"], w["bias"])
    if name == "rmsnorm":
        return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * w["weight"]
    if name == "cross_entropy":
        logits, labels = inputs["logits"], inputs["labels"]
        m = logits.max(axis=1, keepdims=True)
        lse = np.log(np.exp(logits - m).sum(axis=1)) + m[:, 0]
        return np.array((lse - logits[np.arange(len(labels)), labels]).mean())
    if name == "mlp":
        return linear(gelu(linear(x, w["fc1.weight"], w["fc1.bias"])), w["fc2.weight"], w["fc2.bias"])
    if name == "transformer_block":
        B, T, D, H = 2, 16, 64, 4
        qkv = linear(layer_norm(x, w["ln1.weight"], w["ln1.bias"]), w["attn.qkv.weight"], w["attn.qkv.bias"])
        q, k, v = (qkv[..., i * D:(i + 1) * D].reshape(B, T, H, D // H).transpose(0, 2, 1, 3) for i in range(3))
        ctx = softmax(q @ k.transpose(0, 1, 3, 2) * 0.25) @ v
        h = x + linear(ctx.transpose(0, 2, 1, 3).reshape(B, T, D), w["attn.out.weight"], w["attn.out.bias"])
        ff = linear(gelu(linear(layer_norm(h, w["ln2.weight"], w["ln2.bias"]), w["mlp.fc1.weight"], w["mlp.fc1.bias"])),
                    w["mlp.fc2.weight"], w["mlp.fc2.bias"])
        return h + ff
    raise KeyError(name)


# The interpreter computes in float64 and rounds once; compiled kernels compute in float32
# (sums in float32 over at most a few thousand terms).
TOLERANCE = {False: 1e-5, True: 4e-5}


def main():
    kiln, examples, work = sys.argv[1:4]
    # "reference" (the interpreter) or a plugin's name: the compiled kernels against numpy.
    backend = sys.argv[4] if len(sys.argv) > 4 else "reference"
    os.makedirs(work, exist_ok=True)
    # Fresh inputs every run; the seed is printed so a failure can be replayed.
    seed = int(os.environ.get("KILN_TEST_SEED", int.from_bytes(os.urandom(4), "little")))
    print(f"seed {seed} (set KILN_TEST_SEED to replay)")
    failures = 0
    names = sorted(f[:-5] for f in os.listdir(examples) if f.endswith(".json"))
    for name in names:
        graph = json.load(open(os.path.join(examples, name + ".json")))
        rng = np.random.default_rng([seed, len(name)])
        inputs = {}
        for spec in graph["inputs"]:
            if spec["dtype"] == "f32":
                inputs[spec["name"]] = rng.uniform(-2, 2, spec["shape"]).astype(np.float32)
            else:
                low, high = spec.get("range", [0, 8])
                inputs[spec["name"]] = rng.integers(low, high, spec["shape"]).astype(np.int64)
        in_path = os.path.join(work, f"{name}.{backend}.inputs.safetensors")
        out_path = os.path.join(work, f"{name}.{backend}.outputs.safetensors")
        write_safetensors(in_path, inputs)
        cmd = [kiln, "run", os.path.join(examples, name + ".json"), "--backend", backend, "--inputs", in_path,
               "--save-outputs", out_path]
        weights_path = os.path.join(examples, name + ".safetensors")
        weights = {}
        if os.path.exists(weights_path):
            cmd += ["--weights", weights_path]
            weights = {k: v.astype(np.float64) for k, v in read_safetensors(weights_path).items()}
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL {name}: kiln exited {run.returncode}\n{run.stdout}{run.stderr}")
            failures += 1
            continue
        got = list(read_safetensors(out_path).values())[0].astype(np.float64)
        want = expected(name, {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in inputs.items()}, weights)
        err = float(np.max(np.abs(got - want))) if want.size else 0.0
        scale = float(np.max(np.abs(want))) if want.size else 1.0
        ok = got.shape == want.shape and err <= TOLERANCE[backend != "reference"] * max(1.0, scale)
        print(f"{'ok  ' if ok else 'FAIL'} {name}: shape {list(got.shape)}, max abs error {err:.3g} (scale {scale:.3g})")
        failures += 0 if ok else 1
    print(f"{len(names) - failures} of {len(names)} examples match numpy ({backend})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
