"""Reciprocal-rank fusion, and how much a keyword list weighs in it, written once for every backend.

A keyword list's weight is set per query by how well its first places agree with the query's
meaning (``agreement``): the mean cosine with the query of its first ``AGREE_TOP`` records, over
the mean of the best ``AGREE_TOP`` cosines of the same layer (its vector list's first places).
Where BM25's first places are long messages sharing only the request's common words (PrefEval's
filler chats under "what restaurants would you recommend?"), their cosines are far below the
vector list's and the keyword list steps back; where they are the evidence (LoCoMo's names and
dates), their cosines are about the vector list's own and it weighs fully. One static weight could
not do both: 0.35 won PrefEval and lost LoCoMo 4.7 points of R@10, 1.0 the reverse
(``bench/fusion_loo.py``, which chose ``AGREE_TOP``, ``AGREE_FULL`` and ``AGREE_POWER``
leave-one-conversation-out across LoCoMo, BEAM and PrefEval; docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

AGREE_TOP = 5  # first places of each list compared
AGREE_FULL = 0.9  # an agreement at or above this weighs the keyword list fully
AGREE_POWER = 2.0  # below it the weight falls as (agreement / AGREE_FULL) ** AGREE_POWER
# The instructions' list weighs by the agreement of its first INSTRUCTION_TOP records (a tenant has
# a few instructions, each about its own scope: the one closest to a request is the one it is under).
INSTRUCTION_TOP = 1
# ... against the atoms' vector list's first as many records: it weighs fully only when its first
# is as close to the query as the closest atom ("Maya instructed the assistant: ..." is close to
# every question naming Maya, but closer than her facts only when it asks how to answer her), and
# below that as (agreement / INSTRUCTION_FULL) ** AGREE_POWER.
INSTRUCTION_FULL = 1.0


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


def finding_rrf(
    lists: Sequence[Sequence[K]],
    k: float,
    weights: Sequence[float],
    sources: Mapping[K, frozenset[str]],
) -> list[tuple[K, float]]:
    """RRF over findings: a record that stands for one message (the message itself, or an atom
    drawn from it alone: ``sources``) takes, in each list, the best place of any record naming
    that message (an atom drawn from it and others included), so ``score(d) = sum(w / (k + place))`` over the lists holding any form of d's
    finding. One thing said, found as the message by one list and as its atom by another, then
    ranks as a finding that several lists agree on; plain ``rrf`` scored each form on its own
    lists, and an atom and its message, each in the middle of its layer's lists, stood below
    records first in one. A record drawn from several messages (or from none known) keeps its
    own places: it would otherwise take the best of every message it names. Ties go to the
    record's own ``rrf`` score (the form the lists rank best leads), then to first-seen order."""
    best = source_places(lists, sources)
    scores: dict[K, tuple[float, float]] = {}
    for key, alone in rrf(lists, k, weights):
        named = sources.get(key, frozenset())
        if len(named) != 1:
            scores[key] = (alone, alone)
            continue
        (source,) = named
        total = sum(
            w / (k + first[source]) for first, w in zip(best, weights, strict=True) if source in first
        )
        scores[key] = (total, alone)
    return [(key, score[0]) for key, score in sorted(scores.items(), key=lambda kv: kv[1], reverse=True)]


def source_places(lists: Sequence[Sequence[K]], sources: Mapping[K, frozenset[str]]) -> list[dict[str, int]]:
    """Per list, each source message's best place: the first rank of any record naming it."""
    best: list[dict[str, int]] = []
    for ranked in lists:
        first: dict[str, int] = {}
        for rank, key in enumerate(ranked, start=1):
            for source in sources.get(key, ()):
                first.setdefault(source, rank)
        best.append(first)
    return best


def agreement(keyword: Sequence[float], vector: Sequence[float]) -> float | None:
    """The mean of ``keyword`` (the cosines of a keyword list's first records, negatives as 0) over
    the mean of ``vector`` (the cosines of the vector list's first records of the same layer), in
    [0, 1]; None when either is empty or the vector list's cosines are not above 0 (nothing to
    compare with: the keyword list keeps its weight)."""
    if not keyword or not vector:
        return None
    best = sum(vector) / len(vector)
    if best <= 0.0:
        return None
    return min(1.0, sum(max(0.0, c) for c in keyword) / len(keyword) / best)


def agreed_weight(
    agreed: float | None, base: float = 1.0, full: float = AGREE_FULL, power: float = AGREE_POWER
) -> float:
    """A keyword list's RRF weight for its ``agreement`` (``base`` at ``full`` or above, or unknown)."""
    if agreed is None or agreed >= full:
        return base
    return base * float((agreed / full) ** power)
