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

from collections.abc import Hashable, Iterable, Mapping, Sequence
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
    closeness: Mapping[K, float] | None = None,
) -> list[tuple[K, float]]:
    """RRF over findings: a record that stands for one message (the message itself, or an atom
    drawn from it alone: ``sources``) takes, in each list, the best place of any record naming
    that message (an atom drawn from it and others included), so ``score(d) = sum(w / (k + place))`` over the lists holding any form of d's
    finding. One thing said, found as the message by one list and as its atom by another, then
    ranks as a finding that several lists agree on; plain ``rrf`` scored each form on its own
    lists, and an atom and its message, each in the middle of its layer's lists, stood below
    records first in one. A record drawn from several messages (or from none known) keeps its
    own places: it would otherwise take the best of every message it names.

    Ties go to the finding closer in meaning to the query (``closeness``: cosines; a finding's is
    its records' best, a record without one: last), then to the record's own ``rrf`` score (of
    one finding's forms, the one the lists rank best leads), then to first-seen order. A finding
    first in one layer's vector list and second in the other's ties with one placed the other way
    round, and which layer's list was read first said nothing of which is closer: the README's
    "where does Maya live?" put the sister's visit (best cosine 0.65) above "I moved to Lisbon"
    (0.68) so."""
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
    near = nearness(scores, sources, closeness or {})
    ordered = sorted(scores.items(), key=lambda kv: (kv[1][0], near[kv[0]], kv[1][1]), reverse=True)
    return [(key, score[0]) for key, score in ordered]


def nearness(
    keys: Iterable[K], sources: Mapping[K, frozenset[str]], closeness: Mapping[K, float]
) -> dict[K, float]:
    """Each key's finding's cosine with the query: the best of the records standing for its one
    message (``finding_rrf``'s grouping), or a record's own when it names several or none; -2
    (below any cosine) when none is known."""
    keys = list(keys)
    best: dict[str, float] = {}
    for key in keys:
        if len(named := sources.get(key, frozenset())) == 1 and key in closeness:
            (source,) = named
            best[source] = max(best.get(source, -2.0), closeness[key])
    out: dict[K, float] = {}
    for key in keys:
        named = sources.get(key, frozenset())
        out[key] = best.get(next(iter(named)), -2.0) if len(named) == 1 else closeness.get(key, -2.0)
    return out


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
