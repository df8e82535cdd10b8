"""A deterministic, dependency-free embedder: signed feature hashing of words and trigrams.

It needs no model and no network, so it is the honest fake for tests and a usable fallback: texts
that share words (or parts of words: "mountain" / "mountains") land close together. It knows
nothing about meaning beyond surface overlap.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from functools import lru_cache

import numpy as np

from memstrata.errors import ConfigError
from memstrata.models import Vectors

_WORD = re.compile(r"\w+", re.UNICODE)
# Words carry the meaning; trigrams only soften spelling and inflection differences.
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5
# Only the start of a longer text is embedded, as a model's token window would: time and memory
# stay bounded whatever a message's length (a record's start says what it is about).
MAX_CHARS = 16_000


@lru_cache(maxsize=65536)
def _bucket(feature: str, dimensions: int) -> tuple[int, float]:
    """Stable bucket and sign of a feature (blake2b, so results do not depend on PYTHONHASHSEED)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    sign = 1.0 if value >> 63 == 0 else -1.0
    return value % dimensions, sign


def _features(text: str) -> Iterator[tuple[str, float]]:
    """Lowercase word tokens, plus the character trigrams of each word padded with ``#``."""
    for match in _WORD.finditer(text.lower()):
        word = match.group()
        yield "w:" + word, _WORD_WEIGHT
        padded = f"#{word}#"
        for i in range(len(padded) - 2):
            yield "c:" + padded[i : i + 3], _TRIGRAM_WEIGHT


class HashingEmbedder:
    """Embeds texts by feature hashing into ``dimensions`` signed buckets, rows L2-normalised.

    Deterministic across processes and machines. A text without any word (empty, only punctuation)
    gets an all-zero row rather than NaN: it matches nothing. Only the first ``MAX_CHARS``
    characters of a text count.
    """

    def __init__(self, dimensions: int = 256) -> None:
        if dimensions < 1:
            raise ConfigError(f"hashing embedder needs dimensions >= 1, got {dimensions}")
        self.dimensions = dimensions
        self.name = f"hashing-{dimensions}"

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One row per text, in input order; shape ``(len(texts), dimensions)``, float32."""
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in _features(text[:MAX_CHARS]):
                bucket, sign = _bucket(feature, self.dimensions)
                out[row, bucket] += sign * weight
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        # Zero rows stay zero: dividing by 1 instead of 0 keeps them finite.
        np.divide(out, norms, out=out, where=norms > 0)
        return out
