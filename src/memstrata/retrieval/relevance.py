"""How relevant a hit is, in [0, 1], from the evidence: the similarity of its vector to the query's
and how well its words match the query's. Fusion (RRF) decides which records are candidates and
in what order; this score says how good each one is, so it can be shown, compared across queries
of one store and cut at a floor (``query_floor`` for a query's best hit, ``min_score`` for each).

- ``vector``: cosine similarity of the record and the query, mapped linearly from
  ``[VECTOR_ZERO, VECTOR_ONE]`` onto [0, 1] (clamped). With the bundled MiniLM model, questions
  about nothing a conversation holds reach a cosine of about 0.3 with its records, and evidence
  for a question sits at 0.5-0.8.
- ``keyword``: the share of the query's terms the record holds, each term weighted by its inverse
  document frequency (a rare word matched says more than a common one), words compared by their
  Porter stem as the keyword index compares them.
- ``score``: ``VECTOR_WEIGHT * vector + (1 - VECTOR_WEIGHT) * keyword``; the keyword share alone
  when the record or the query has no vector.

The constants were chosen on the LoCoMo dev set (``bench/relevance_floor.py``, docs/benchmarks.md):
among weighted means, noisy-or and maximum of the two signals, this form separated off-topic
queries from evidence best while the floor cost no evidence recall at 10.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memstrata.models import Hit, Layer
from memstrata.ports import SearchIndex
from memstrata.retrieval.term_counts import TermCounts
from memstrata.retrieval.terms import judged, porter_stem, short_text_cache, words

VECTOR_ZERO = 0.2  # a cosine at or below this is no evidence (unrelated text scores about here)
VECTOR_ONE = 0.65  # a cosine at or above this is full evidence (a close paraphrase)
VECTOR_WEIGHT = 0.7  # the vector's share of the score; the keyword share has the rest
PREFIX_MIN = 5  # stems this long match a longer stem they begin


@dataclass(frozen=True, slots=True)
class Evidence:
    """The raw signals behind one hit's score (shown as ``Hit.explain``)."""

    cosine: float | None  # None: the record or the query has no vector
    keyword: float  # idf-weighted share of the query's terms the record holds, 0..1
    fused: float  # the reciprocal-rank-fusion score the candidate was chosen by
    rank: int  # position in the fused order, from 1

    def vector(self) -> float:
        """The cosine mapped onto [0, 1]."""
        if self.cosine is None:
            return 0.0
        return min(1.0, max(0.0, (self.cosine - VECTOR_ZERO) / (VECTOR_ONE - VECTOR_ZERO)))

    def score(self) -> float:
        if self.cosine is None:
            return self.keyword
        return VECTOR_WEIGHT * self.vector() + (1.0 - VECTOR_WEIGHT) * self.keyword

    def explain(self) -> dict[str, float | None]:
        return {
            "relevance": round(self.score(), 6),
            "cosine": None if self.cosine is None else round(self.cosine, 4),
            "vector": round(self.vector(), 4),
            "keyword": round(self.keyword, 4),
            "fused": round(self.fused, 6),
        }


def relevance_of(hit: Hit) -> float:
    """A hit's relevance, as its explanation holds it (what the floor cuts by); a hit made
    elsewhere with no explanation: its score."""
    judged_as = hit.explain.get("relevance")
    return float(judged_as) if isinstance(judged_as, int | float) else hit.score


def idf_weights(terms: Sequence[str], total: int, counts: Mapping[str, int]) -> dict[str, float]:
    """BM25's idf of each term (``counts``: records holding it, of ``total``), always above 0."""
    n = max(total, 1)
    return {t: math.log(1.0 + (n - min(counts.get(t, 0), n) + 0.5) / (counts.get(t, 0) + 0.5)) for t in terms}


def keyword_share(weights: Mapping[str, float], text: str) -> float:
    """The idf-weighted share of the query terms (``weights``) found in ``text``, by stem."""
    return _Weighted(weights).share(text)


class _Held:
    """The stems of a text, as a set and sorted, so that matching a term costs a few look-ups
    and a binary search, not a scan of the text's stems (the scan was most of a recall's relevance
    judging). Their size is the stems' own: a set of every prefix of every stem, as this was
    before, grew with the square of a word's length (one 80,000-character word: 2.5 GB)."""

    __slots__ = ("ordered", "stems")

    def __init__(self, stems: frozenset[str]) -> None:
        self.stems = stems
        self.ordered = sorted(stems)

    def holds(self, term: str) -> bool:
        """Whether the text has the stem ``term``, or one that begins the other (the Porter stems
        of "allergy" and "allergic" are "allergi" and "allerg"), when the shorter is
        ``PREFIX_MIN`` long."""
        if term in self.stems:
            return True
        if len(term) < PREFIX_MIN:
            return False
        # A held stem begins with the term (the first stem sorted at or after it would), or the
        # term begins with a held stem.
        at = bisect_left(self.ordered, term)
        if at < len(self.ordered) and self.ordered[at].startswith(term):
            return True
        return any(term[:k] in self.stems for k in range(PREFIX_MIN, len(term)))


@short_text_cache(maxsize=8_192)
def _stems(text: str) -> _Held:
    """The stems of ``text``'s words (a judged text: a candidate's statement or message with its
    day words), as far as ``judged`` reads it; words are cut to ``MAX_WORD_CHARS``."""
    return _Held(frozenset(porter_stem(w[:-2] if w.endswith("'s") else w) for w in words(judged(text))))


def matched_terms(terms: Sequence[str], text: str) -> list[str]:
    """The ``terms`` that ``text`` holds, compared as the keyword share compares them (by stem)."""
    held = _stems(text)
    return [t for t in terms if held.holds(porter_stem(t))]


class KeywordEvidence:
    """The keyword share of records of one query, with each layer's idf weights read once (through
    ``kept``, the counts kept between searches)."""

    def __init__(self, index: SearchIndex, terms: Sequence[str], kept: TermCounts) -> None:
        self._index = index
        self._terms = list(terms)
        self._kept = kept
        self._stemmed: dict[Layer, _Weighted] = {}
        self._counts: dict[Layer, dict[str, int]] = {}
        self._sizes: dict[Layer, int] = {}

    @property
    def terms(self) -> list[str]:
        return self._terms

    def counts(self, layer: Layer) -> dict[str, int]:
        """Records of ``layer`` holding each term, read once (the keyword query prunes by them)."""
        if layer not in self._counts:
            self._counts[layer] = self._kept.read(layer, self._terms, self.size(layer)) if self._terms else {}
        return self._counts[layer]

    def size(self, layer: Layer) -> int:
        """The records of ``layer`` in the index, read once (the keyword query prunes by it too)."""
        if layer not in self._sizes:
            self._sizes[layer] = self._index.size(layer)
        return self._sizes[layer]

    def share(self, layer: Layer, text: str) -> float:
        """``keyword_share`` of ``text`` with the layer's weights (stemmed and summed once)."""
        stemmed = self._stemmed.get(layer)
        if stemmed is None:
            weights = idf_weights(self._terms, self.size(layer), self.counts(layer))
            stemmed = self._stemmed[layer] = _Weighted(weights)
        return stemmed.share(text)


class _Weighted:
    """Query terms' weights by stem with their total: ``keyword_share`` for many texts."""

    __slots__ = ("stems", "total")

    def __init__(self, weights: Mapping[str, float]) -> None:
        self.total = sum(weights.values())
        self.stems = [(porter_stem(t), w) for t, w in weights.items()]

    def share(self, text: str) -> float:
        if self.total <= 0:
            return 0.0
        held = _stems(text)
        return sum(w for stem, w in self.stems if held.holds(stem)) / self.total
