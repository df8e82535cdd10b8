"""HashingEmbedder: deterministic, normalised, and closer for texts that share words."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from memstrata.embeddings.hashing import MAX_CHARS, HashingEmbedder
from memstrata.errors import ConfigError


def test_shape_dtype_and_name() -> None:
    emb = HashingEmbedder(64)
    vectors = emb.embed(["one", "two words", "three little words"])
    assert vectors.shape == (3, 64)
    assert vectors.dtype == np.float32
    assert emb.name == "hashing-64"
    assert emb.dimensions == 64


def test_rows_are_unit_length() -> None:
    vectors = HashingEmbedder().embed(["hello world", "Caroline went to a support group", "我喜欢爬山"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_deterministic_across_instances_and_processes() -> None:
    texts = ["I love hiking in the mountains", "tax return deadline"]
    here = HashingEmbedder().embed(texts)
    np.testing.assert_array_equal(here, HashingEmbedder().embed(texts))
    # A fresh interpreter gets a different PYTHONHASHSEED; the vectors must not change.
    code = (
        "import json; from memstrata.embeddings.hashing import HashingEmbedder;"
        f"print(json.dumps(HashingEmbedder().embed({texts!r}).tolist()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    ).stdout
    np.testing.assert_allclose(np.array(json.loads(out), dtype=np.float32), here, rtol=1e-6)


def test_similar_texts_score_closer_than_unrelated() -> None:
    query, near, far = HashingEmbedder().embed(
        ["I love hiking in the mountains", "mountain hiking trails", "tax return deadline"]
    )
    assert float(query @ near) > float(query @ far) + 0.1


def test_case_does_not_matter() -> None:
    a, b = HashingEmbedder().embed(["Mountain Hiking", "mountain hiking"])
    assert float(a @ b) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("text", ["", "   ", "?!...", "\n\t"])
def test_wordless_text_gives_a_finite_zero_row(text: str) -> None:
    vectors = HashingEmbedder().embed([text, "hello"])
    assert np.isfinite(vectors).all()
    assert not vectors[0].any()
    assert np.linalg.norm(vectors[1]) == pytest.approx(1.0, rel=1e-5)


def test_empty_batch() -> None:
    assert HashingEmbedder(32).embed([]).shape == (0, 32)


def test_rejects_non_positive_dimensions() -> None:
    with pytest.raises(ConfigError):
        HashingEmbedder(0)


def test_only_the_start_of_a_long_text_counts_and_memory_does_not_grow_with_length() -> None:
    start = "mountain hiking in the alps " * (MAX_CHARS // 28 + 1)
    emb = HashingEmbedder(64)
    texts = [start + "unrelated words " * 300_000, start[:MAX_CHARS]]
    tracemalloc.start()
    try:
        long, short = emb.embed(texts)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(long, short)
    # The 5 MB text costs its 16k-character slice, not a feature list per word (hundreds of MB).
    assert peak < 2_000_000, peak


def _one_feature_at_a_time(text: str, dimensions: int) -> np.ndarray:
    """The embedder's definition, feature by feature: what every stored hashing vector was made by."""
    row = np.zeros(dimensions, dtype=np.float32)
    for match in re.finditer(r"\w+", text[:MAX_CHARS].lower()):
        padded = f"#{match.group()}#"
        features = [("w:" + match.group(), 1.0)] + [
            ("c:" + padded[i : i + 3], 0.5) for i in range(len(padded) - 2)
        ]
        for feature, weight in features:
            value = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
            row[value % dimensions] += (1.0 if value >> 63 == 0 else -1.0) * weight
    norm = np.linalg.norm(row)
    return row / norm if norm > 0 else row


def test_vectors_are_bit_for_bit_those_of_the_feature_by_feature_definition() -> None:
    # Stores hold vectors made one feature at a time; the word cache and the single numpy call
    # must not move them by a rounding (repeated words, long uncached words, accents, Chinese).
    rng = random.Random(7)
    alphabet = "abcdefgh  ,.!?ÄÖüßİ中文记忆 0123456789-_"
    texts = ["", "!!!", "x" * 100, "word " * 60, "Mountain mountain MOUNTAIN", "我喜欢爬山 and hiking"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300))) for _ in range(200)]
    for dimensions in (7, 256):
        got = HashingEmbedder(dimensions).embed(texts)
        for row, text in zip(got, texts, strict=True):
            assert np.array_equal(row, _one_feature_at_a_time(text, dimensions)), text
