"""The safetensors format, written from torch tensors (kiln reads it for weights)."""
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
