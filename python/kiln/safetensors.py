"""The safetensors format, written from torch tensors (kiln reads it for weights) and read back
(`kiln bench` hands PyTorch its inputs this way)."""
import ctypes
import json
import struct

_NAMES = {
    "bool": "BOOL", "int8": "I8", "uint8": "U8", "int16": "I16", "int32": "I32", "int64": "I64",
    "float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64",
}


def serialize(tensors):
    """Bytes of a safetensors file holding `tensors` ({name: tensor}), in the given order."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().to("cpu").contiguous()
        dtype = str(t.dtype).replace("torch.", "")
        if dtype not in _NAMES:
            raise ValueError(f"tensor '{name}': dtype {t.dtype} has no safetensors name kiln reads")
        data = ctypes.string_at(t.data_ptr(), t.numel() * t.element_size()) if t.numel() else b""
        header[name] = {"dtype": _NAMES[dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def write(path, tensors):
    with open(path, "wb") as f:
        f.write(serialize(tensors))


_DTYPES = {v: k for k, v in _NAMES.items()}


def read(path):
    """{name: tensor} from a safetensors file, in the file's order."""
    import torch  # only readers need it

    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: too short for a safetensors header")
    (size,) = struct.unpack("<Q", data[:8])
    if 8 + size > len(data):
        raise ValueError(f"{path}: header of {size} bytes runs past the file")
    header = json.loads(data[8:8 + size])
    body = memoryview(data)[8 + size:]
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        if spec["dtype"] not in _DTYPES:
            raise ValueError(f"{path}: tensor '{name}': dtype {spec['dtype']} is not one kiln reads")
        begin, end = spec["data_offsets"]
        if not 0 <= begin <= end <= len(body):
            raise ValueError(f"{path}: tensor '{name}': bytes {begin}..{end} outside the file")
        kind = getattr(torch, _DTYPES[spec["dtype"]])
        flat = (torch.frombuffer(bytearray(body[begin:end]), dtype=kind) if end > begin
                else torch.empty(0, dtype=kind))
        out[name] = flat.reshape(spec["shape"])
    return out
