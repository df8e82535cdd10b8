"""tensorfile: the safetensors layout read and written with numpy alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memstrata.embeddings import tensorfile
from memstrata.errors import EmbeddingError


def sample() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {
        "b.weight": rng.standard_normal((3, 4)).astype(np.float32),
        "a.q": rng.integers(-127, 128, size=(2, 8)).astype(np.int8),
        "a.ids": np.arange(5, dtype=np.int64),
    }


def test_round_trip_with_metadata(tmp_path: Path) -> None:
    path = tmp_path / "t.safetensors"
    tensorfile.save(path, sample(), {"model": "x", "hidden_size": "4"})
    loaded = tensorfile.load(path)
    assert sorted(loaded) == ["a.ids", "a.q", "b.weight"]
    for name, array in sample().items():
        np.testing.assert_array_equal(loaded[name], array)
        assert loaded[name].dtype == array.dtype
    assert tensorfile.metadata(path) == {"hidden_size": "4", "model": "x"}


def test_writing_is_byte_reproducible(tmp_path: Path) -> None:
    tensorfile.save(tmp_path / "1", sample(), {"k": "v"})
    tensorfile.save(tmp_path / "2", dict(reversed(sample().items())), {"k": "v"})
    assert (tmp_path / "1").read_bytes() == (tmp_path / "2").read_bytes()


@pytest.mark.parametrize("content", [b"", b"\x05\x00\x00\x00\x00\x00\x00\x00{bad}", b"\xff" * 16])
def test_not_a_tensor_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad"
    path.write_bytes(content)
    with pytest.raises(EmbeddingError, match="not a tensor file"):
        tensorfile.load(path)


def test_truncated_file(tmp_path: Path) -> None:
    path = tmp_path / "t"
    tensorfile.save(path, sample(), {})
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(EmbeddingError, match="does not fit"):
        tensorfile.load(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="cannot read"):
        tensorfile.metadata(tmp_path / "nope")
