"""Read and write tensor files in the safetensors layout with numpy alone.

The layout is an 8-byte little-endian header length, a JSON header mapping each tensor name to its
``dtype``, ``shape`` and ``data_offsets`` (plus an optional ``__metadata__`` of strings), then the
raw little-endian bytes. It needs no library to read: the shipped model is memory-mapped and each
tensor is a zero-copy view, so opening it costs no memory until a tensor is touched.
Writing is deterministic (sorted names, fixed padding), so a rebuild is byte-identical.
"""

from __future__ import annotations

import json
import mmap
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memstrata.errors import EmbeddingError

_DTYPES: dict[str, str] = {"F32": "<f4", "F16": "<f2", "I8": "i1", "U8": "u1", "I32": "<i4", "I64": "<i8"}
_NAMES = {np.dtype(v).str: k for k, v in _DTYPES.items()}
_MAX_HEADER = 16 * 1024 * 1024  # far above any real header; guards against reading a wrong file
_ALIGN = 8


def read_header(path: Path) -> tuple[dict[str, Any], int]:
    """The JSON header of ``path`` and the offset where tensor data starts.

    Raises ``EmbeddingError`` when the file is missing or is not in this layout.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
            if len(head) != 8:
                raise EmbeddingError(f"{path} is not a tensor file (too short)")
            (size,) = struct.unpack("<Q", head)
            if size > _MAX_HEADER:
                raise EmbeddingError(f"{path} is not a tensor file (header of {size} bytes)")
            header = json.loads(fh.read(size))
    except OSError as exc:
        raise EmbeddingError(f"cannot read tensor file {path}: {exc}") from exc
    except ValueError as exc:  # JSON or UTF-8 errors
        raise EmbeddingError(f"{path} is not a tensor file (bad header): {exc}") from exc
    if not isinstance(header, dict):
        raise EmbeddingError(f"{path} is not a tensor file (header is not an object)")
    return header, 8 + size


def metadata(path: Path) -> dict[str, str]:
    """The ``__metadata__`` strings of ``path`` (reads the header only)."""
    header, _ = read_header(path)
    meta = header.get("__metadata__", {})
    return {str(k): str(v) for k, v in meta.items()} if isinstance(meta, dict) else {}


def load(path: Path) -> dict[str, npt.NDArray[Any]]:
    """Every tensor of ``path`` as a read-only array viewing a memory map of the file."""
    header, start = read_header(path)
    try:
        with open(path, "rb") as fh:
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"cannot map tensor file {path}: {exc}") from exc
    buffer = memoryview(mapped)
    out: dict[str, npt.NDArray[Any]] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = np.dtype(_DTYPES[info["dtype"]])
            begin, end = (start + int(x) for x in info["data_offsets"])
            shape = tuple(int(x) for x in info["shape"])
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"{path}: tensor {name!r} has a bad header entry") from exc
        count = int(np.prod(shape, dtype=np.int64))
        if end > len(buffer) or end - begin != count * dtype.itemsize:
            raise EmbeddingError(f"{path}: tensor {name!r} does not fit the file (truncated?)")
        out[name] = np.frombuffer(buffer[begin:end], dtype=dtype).reshape(shape)
    return out


def save(path: Path, tensors: Mapping[str, npt.NDArray[Any]], meta: Mapping[str, str]) -> None:
    """Write ``tensors`` (C-ordered, little-endian) and ``meta`` to ``path``, byte-reproducibly."""
    header: dict[str, Any] = {"__metadata__": dict(sorted(meta.items()))}
    blobs: list[bytes] = []
    offset = 0
    for name in sorted(tensors):
        array = np.ascontiguousarray(tensors[name])
        kind = _NAMES.get(array.dtype.newbyteorder("<").str)
        if kind is None:
            raise ValueError(f"tensor {name!r}: unsupported dtype {array.dtype}")
        blob = array.astype(_DTYPES[kind], copy=False).tobytes()
        header[name] = {
            "dtype": kind,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":"), sort_keys=False).encode("utf-8")
    text += b" " * (-len(text) % _ALIGN)  # data starts aligned, as the format recommends
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(text)))
        fh.write(text)
        for blob in blobs:
            fh.write(blob)
