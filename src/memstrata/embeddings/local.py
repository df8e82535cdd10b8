"""The default local embedder: all-MiniLM-L6-v2 shipped in the package, run by numpy.

No torch, no network, no extra: the weights (int8, 26 MB) and vocabulary live in
``memstrata/embeddings/data`` (rebuilt by ``scripts/build_local_model.py``). Vectors match
sentence-transformers' all-MiniLM-L6-v2 to cosine >= 0.999 (tested when both are installed).

Speed choices, each measured (docs/design.md, "Embeddings"):
- one text padded only to a multiple of 4 tokens (the row blocks BLAS' kernels take); a short
  query multiplied by the weights' blocks on one core (``minilm``'s thin passes), a longer one's
  layers split in halves across two cores (``halves.py``); a batch is sorted by length
  and cut into groups padded only to their own longest text (attention and pooling masked), at
  most ``_TOKEN_BUDGET`` tokens per group, spread over the calling thread and the helpers
  (``halves.spread``);
- input capped at the model's 256 word pieces (tokenizing stops there), so memory does not grow
  with text length;
- BLAS runs single-threaded during an embed (``blas.py``).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from memstrata.blas import blas_runs_thin_products, single_threaded_blas
from memstrata.embeddings import tensorfile
from memstrata.embeddings.halves import CORES, on_two_cores, spread
from memstrata.embeddings.minilm import Config, MiniLM
from memstrata.embeddings.query_process import QueryProcess, shared
from memstrata.embeddings.wordpiece import WordPieceTokenizer
from memstrata.errors import EmbeddingError
from memstrata.models import QueryPassReport, QueryProcessState, Vectors

log = logging.getLogger(__name__)

LOCAL_MODEL = "all-MiniLM-L6-v2-int8"
NAME = f"local:{LOCAL_MODEL}"  # what a store records for its vectors
DATA_DIR = Path(__file__).resolve().parent / "data"
_WEIGHTS = "all-MiniLM-L6-v2-int8.safetensors"
_VOCAB = "vocab.txt"
# A group holds at most _TOKEN_BUDGET tokens (matrix products still large enough for full BLAS
# speed, activations 1.5 MB each): a batch's own tokens (packed, no padding), a query group's
# padded ones, and then at most _SCORE_BUDGET attention scores per head (texts x width^2; 12 heads
# x 4 bytes x 2**17 = 6.3 MB), so memory per group is bounded for long texts too. A packed group's
# attention runs text length by text length (at most 12 x budget x 256 scores).
_TOKEN_BUDGET = 1024
_SCORE_BUDGET = 1 << 17
_MAX_GROUP = 64
# A batch of more tokens than this is cut into at least one group per worker, so the pipeline's
# small batches (a session's messages, a run's atoms) use every core, as torch's threads would.
_SPLIT_ABOVE = 128
# Groups of one batch run on this many threads, the caller's and helpers (``halves.spread``; numpy
# releases the GIL in its kernels): the parallelism BLAS threads would give, without their
# busy-waiting when the machine is loaded.
_WORKERS = CORES
# At most _WORKERS forward passes at once in the process, whoever calls: the pipeline embeds from
# several threads, and each pass holds ~30 MB of activations (and glibc keeps an arena per thread).
_passes = threading.BoundedSemaphore(_WORKERS)
_models_lock = threading.Lock()
_models: dict[Path, tuple[MiniLM, WordPieceTokenizer]] = {}  # immutable once loaded


def bundled_local_model() -> Path | None:
    """The shipped model directory, or None when its files are missing (e.g. a trimmed install)."""
    return DATA_DIR if (DATA_DIR / _WEIGHTS).is_file() and (DATA_DIR / _VOCAB).is_file() else None


class LocalEmbedder:
    """Embeds with the shipped MiniLM on CPU; rows L2-normalised float32, 384 dimensions.

    ``name`` and ``dimensions`` read no weights; the model loads on the first ``embed``, once, under
    a lock (the store embeds from worker threads); after that ``embed`` is thread-safe. A missing or
    corrupt model file raises ``EmbeddingError``.

    With ``query_process`` (a server: ``embedding.query_process``), query passes run in a child
    process shared by the process's memories (``query_process.py``), started here in the
    background; until it answers, and whenever it fails, they run here as without it.

    ``query_halves=False`` keeps a query's pass on one core (the query process's child: see
    ``embed_queries``), as does ``query_process`` for the passes that stand in for the child.
    """

    def __init__(
        self,
        model_dir: Path | None = None,
        *,
        query_process: bool = False,
        query_halves: bool = True,
    ) -> None:
        self.model_dir = model_dir or DATA_DIR
        self.name = NAME
        self._config: Config | None = None
        self._loaded: tuple[MiniLM, WordPieceTokenizer] | None = None
        self._lock = threading.Lock()
        # A server's own query passes only stand in while its child starts or restarts: on one
        # core, so the server keeps no helper thread for them.
        self._halves = query_halves and not query_process and _WORKERS > 1
        # POSIX only: the pipe is read and written with select() and a non-blocking write end.
        posix = os.name == "posix"
        self._process = shared(self.model_dir, self.dimensions) if query_process and posix else None

    @property
    def dimensions(self) -> int:
        """The vector length, from the model file's header (the weights are not read)."""
        if self._config is None:
            self._config = Config.from_metadata(tensorfile.metadata(self.model_dir / _WEIGHTS))
        return self._config.hidden

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit row per text, in input order; shape ``(len(texts), dimensions)``.

        Background work (capture, L1, reindex): in a server's worker process, at its lower priority.
        """
        model, tokenizer = self._model()
        out = np.zeros((len(texts), model.dimensions), dtype=np.float32)
        if not texts:
            return out
        encoded = [tokenizer.encode(text) for text in texts]
        groups = list(_groups(encoded, packed=True))

        def run(group: int) -> Vectors:
            with _passes:
                return model.encode([encoded[i] for i in groups[group]])

        with _failures():
            # Groups on this thread and the helpers (in a server's worker process: at its lower
            # priority).
            results = spread(run, len(groups)) if _WORKERS > 1 else [run(g) for g in range(len(groups))]
            for rows, vectors in zip(groups, results, strict=True):
                out[rows] = vectors
        return out

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """As ``embed``, for texts a caller is waiting on (search queries, micro-batched).

        Runs in the caller's thread at its priority, outside the batch passes' semaphore (a query
        pass is small): a thin pass (a short query) on one core with the weights' column blocks,
        a longer one with each layer in halves on two cores, unless ``query_halves`` is off. The
        vectors equal
        ``embed``'s up to float rounding. With a query process running, the pass runs there (same
        code, same vectors).

        The query process's child runs its passes on one core: it serves a loaded server (many
        agents), where the helper's half competes for the same two cores. On a machine without
        thin passes (OpenBLAS' Haswell kernels) halves took 10.1 ms of wall and 15.5 of CPU
        against one core's 11.1 and 11.1; under 50 agents the median recall was lower with the
        child on one core in 10 of 11 interleaved pairs, p95 in 3 of 3 on the final code
        (``bench/gateway_load.py``, docs/benchmarks.md).
        """
        done = self._process.embed(texts) if self._process is not None else None
        if done is not None:
            return done
        model, tokenizer = self._model()
        out = np.zeros((len(texts), model.dimensions), dtype=np.float32)
        if not texts:
            return out
        encoded = [tokenizer.encode(text) for text in texts]
        pair = on_two_cores if self._halves else None
        # Thin passes' weight blocks (42 MB) only where queries are answered for good: a
        # server's own passes only stand in while its query process starts or restarts.
        thin = self._process is None and blas_runs_thin_products()
        with _failures():
            for rows in _groups(encoded, packed=False):
                out[rows] = model.encode([encoded[i] for i in rows], pair, thin=thin)
        return out

    def warm_up(self, within: float) -> None:
        """Wait up to ``within`` seconds for the query process to start, and load the weights here:
        the server's own batches (a remembered note) and any query pass without the child run
        here."""
        child = self._process
        if child is not None and (state := child.wait_ready(within)) != "running":
            log.warning("query process %s after %.0f s: its passes run here meanwhile", state, within)
        self._model()

    def query_report(self) -> QueryPassReport:
        """The query process's state, passes and failures."""
        return QueryPassReport(*_child_report(self._process))

    def _model(self) -> tuple[MiniLM, WordPieceTokenizer]:
        if self._loaded is None:
            with self._lock:
                if self._loaded is None:
                    self._loaded = self._load()
        return self._loaded

    def _load(self) -> tuple[MiniLM, WordPieceTokenizer]:
        """The model of ``model_dir``, loaded once per process: every Memory opened shares it."""
        key = self.model_dir.resolve()
        with _models_lock:
            if key not in _models:
                path = self.model_dir / _WEIGHTS
                log.info("loading local embedding model %s from %s", LOCAL_MODEL, path)
                config = Config.from_metadata(tensorfile.metadata(path))
                model = MiniLM(tensorfile.load(path), config)
                tokenizer = WordPieceTokenizer.from_file(self.model_dir / _VOCAB, config.max_length)
                _models[key] = (model, tokenizer)
            model, tokenizer = _models[key]
        self._config = model.config
        return model, tokenizer


def _child_report(child: QueryProcess | None) -> tuple[QueryProcessState, int, int]:
    """A child's state, passes and failures for ``QueryPassReport`` (``off`` without one)."""
    return ("off", 0, 0) if child is None else (child.state, child.passes, child.failures)


@contextmanager
def _failures() -> Iterator[None]:
    """BLAS on one thread for the block; a corrupt model file or no memory as ``EmbeddingError``."""
    try:
        with single_threaded_blas():
            yield
    except (ValueError, IndexError, MemoryError) as exc:
        raise EmbeddingError(f"local model {LOCAL_MODEL} failed to embed: {exc!r}") from exc


def _groups(encoded: Sequence[Sequence[int]], *, packed: bool) -> Iterator[list[int]]:
    """Indexes of ``encoded`` sorted by length (longest first), in groups within the token budget
    (a longer text alone). ``packed`` (a batch: ``MiniLM.encode`` packs its rows, no padding)
    counts each text's own tokens, and a batch over ``_SPLIT_ABOVE`` tokens gives every core a
    group; otherwise (queries, padded to a group's first text) the padded tokens count, with at
    most ``_SCORE_BUDGET`` attention scores per head and ``_MAX_GROUP`` texts."""
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]), reverse=True)
    total = sum(len(ids) for ids in encoded)
    spread = packed and total > _SPLIT_ABOVE
    budget = min(_TOKEN_BUDGET, -(-total // _WORKERS)) if spread else _TOKEN_BUDGET
    group: list[int] = []
    rows = 0
    for i in order:
        # Sorted longest first, so the group's first item sets its padded width.
        width = len(encoded[group[0]]) if group else len(encoded[i])
        size = len(group) + 1
        if packed:
            full = rows + len(encoded[i]) > budget
        else:
            full = size * width > budget or size * width * width > _SCORE_BUDGET or size > _MAX_GROUP
        if group and full:
            yield group
            group, rows = [], 0
        group.append(i)
        rows += len(encoded[i])
    if group:
        yield group
