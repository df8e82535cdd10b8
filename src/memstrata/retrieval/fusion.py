"""Reciprocal-rank fusion, written once for every backend."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def rrf(
    lists: Sequence[Sequence[K]], k: float = 60.0, weights: Sequence[float] | None = None
) -> list[tuple[K, float]]:
    """Fuse ranked lists: ``score(d) = sum(w / (k + rank))`` over the lists containing ``d`` (rank from 1).

    Returns ``(key, score)`` by descending score; ties keep first-seen order. Full lists are fused,
    not top-N cuts, so a record deep in one list still counts.
    """
    ws = weights or [1.0] * len(lists)
    scores: dict[K, float] = {}
    for ranked, w in zip(lists, ws, strict=True):
        for rank, key in enumerate(ranked, start=1):
            scores[key] = scores.get(key, 0.0) + w / (k + rank)
    return sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
