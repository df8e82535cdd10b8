"""A deterministic, dependency-free embedder: signed feature hashing of words and trigrams.

It needs no model and no network, so it is the honest fake for tests and a usable fallback: texts
that share words (or parts of words: "mountain" / "mountains") land close together. It knows
nothing about meaning beyond surface overlap.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
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


def _bucket(feature: str, dimensions: int) -> tuple[int, float]:
    """Stable bucket and sign of a feature (blake2b, so results do not depend on PYTHONHASHSEED)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    sign = 1.0 if value >> 63 == 0 else -1.0
    return value % dimensions, sign


def _word(word: str, dimensions: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Buckets and signed weights of one lowercase word's features: the word, then the character
    trigrams of it padded with ``#``."""
    padded = f"#{word}#"
    features = [("w:" + word, _WORD_WEIGHT)]
    features += [("c:" + padded[i : i + 3], _TRIGRAM_WEIGHT) for i in range(len(padded) - 2)]
    buckets, values = [], []
    for feature, weight in features:
        bucket, sign = _bucket(feature, dimensions)
        buckets.append(bucket)
        values.append(sign * weight)
    return tuple(buckets), tuple(values)


# Words are cached, so a text costs a lookup per word and one numpy call, not one per feature: a
# message of 20 words went from 108-215 to 27-59 us (identical vectors); a 7-word query stays at
# 70-90 us either way.
# Only words of up to _CACHED_CHARS characters: a longer "word" (a hash, a base64 blob) is rarely
# seen twice, and its entry would grow with its length. An entry is at most ~2 KB (42 features),
# so the cache stays under ~16 MB (a conversation's vocabulary is a few thousand words).
_CACHED_CHARS = 40
_cached_word = lru_cache(maxsize=8192)(_word)


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
            buckets: list[int] = []
            values: list[float] = []
            for match in _WORD.finditer(text[:MAX_CHARS].lower()):
                word = match.group()
                cached = len(word) <= _CACHED_CHARS
                word_buckets, word_values = (_cached_word if cached else _word)(word, self.dimensions)
                buckets += word_buckets
                values += word_values
            # Unbuffered and in order: the float32 sums of adding the features one at a time.
            np.add.at(out[row], buckets, np.asarray(values, dtype=np.float32))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        # Zero rows stay zero: dividing by 1 instead of 0 keeps them finite.
        np.divide(out, norms, out=out, where=norms > 0)
        return out
