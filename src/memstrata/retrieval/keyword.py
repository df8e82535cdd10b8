"""Keyword ranking policy, the same on every backend: which query terms to send, and in what order
to ask for matches. The store only answers BM25 top-K and document counts.

A term found in more than ``COMMON_SHARE`` (half) of a layer's records is dropped from the query
from ``COMMON_MIN_RECORDS`` records on (the rarest term stays): its idf is near zero, so all it does
is rank every record holding it by length. A user's own name in a one-user store is such a term: "What food should I avoid offering
Maya?" matched every atom through "Maya", and the shortest ones outranked the peanut allergy that
only the vector found (the demo's search).

A term found in every record of a layer says nothing of any of them: BM25 gives it the least idf
there is, so a list ranked on it alone is the records by length. Beside a vector list
(``informative``) such a term is dropped whatever the index's size, the last one too: a keyword
list with no informative term is empty and the vector list decides. The README's quickstart asked
"where does Maya live?" of three messages and two atoms, each holding "Maya" (atoms name her; a
message's indexed text names its speaker), and the keyword lists put the sister's visit first by
length alone, a full reciprocal-rank place above the Lisbon move the vector list ranked first.
Alone (keyword mode, no embedder) the list is the ranking, and the rarest term still stays.

On a big index (``PRUNE_MIN_RECORDS`` records or more) two things keep a query fast without
changing what ranks first:
- a term found in more than ``PRUNE_SHARE`` of the records adds almost nothing to BM25 (its idf is
  near zero) but costs a score for every record it matches: it is dropped (the rarest is kept);
- the records holding at least two of the terms are asked for first (few, cheap to score; their
  BM25 order is the OR query's); the full OR query fills up only when they are fewer than ``k``.
Small indexes are left alone: scoring every match is cheap there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memstrata.models import AtomFilter, MessageFilter, Scored, Tenant, layer_of
from memstrata.ports import SearchIndex

COMMON_SHARE = 0.5
COMMON_MIN_RECORDS = 10  # below this a share says nothing (2 of 3 records is not "most")
PRUNE_MIN_RECORDS = 5_000
PRUNE_SHARE = 0.2
MAX_PAIRED_TERMS = 8  # at most 28 pairs in the two-term-first query


def prune(
    terms: Sequence[str], total: int, counts: Mapping[str, int], *, informative: bool = False
) -> list[str]:
    """``terms`` without those found in more than ``COMMON_SHARE`` of ``total`` records, or on a
    big index more than ``PRUNE_SHARE`` (``counts``: records per term). Never empty while ``terms``
    has a non-blank term: the rarest one stays. ``informative`` (a vector list stands beside):
    first without those every record holds (``uninformative``), and empty when only such are left."""
    kept = [t for t in terms if t.strip()]
    if informative:
        kept = [t for t in kept if not uninformative(t, total, counts)]
    if len(kept) < 2:
        return kept
    if total < COMMON_MIN_RECORDS:
        return kept
    share = PRUNE_SHARE if total >= PRUNE_MIN_RECORDS else COMMON_SHARE
    common = [t for t in kept if counts.get(t, 0) > share * total]
    rest = [t for t in kept if t not in common]
    return rest or [min(kept, key=lambda t: counts.get(t, 0))]


def uninformative(term: str, total: int, counts: Mapping[str, int]) -> bool:
    """Whether every one of the layer's ``total`` records holds ``term`` (``counts``: records per
    term): it can tell none of them apart. ``total`` is the index's size, which records erased
    still count in (``SearchIndex.size``): a layer that lost records keeps such a term, as before."""
    return total > 0 and counts.get(term, 0) >= total


def two_terms_first(first: Sequence[Scored], rest: Sequence[Scored], k: int) -> list[Scored]:
    """``first`` (records with two or more terms) then the other OR matches below them, ``k`` in all."""
    if len(first) >= k:
        return list(first[:k])
    seen = {s.seq for s in first}
    floor = min((s.score for s in first), default=0.0)
    below = [Scored(s.seq, min(s.score, floor) - 1e-9) for s in rest if s.seq not in seen]
    return [*first, *below][:k]


def keyword_top(
    index: SearchIndex,
    tenant: Tenant,
    flt: MessageFilter | AtomFilter,
    terms: Sequence[str],
    k: int,
    counts: Mapping[str, int] | None = None,
    total: int | None = None,
    *,
    informative: bool = False,
) -> list[Scored]:
    """BM25 top-``k`` of the tenant's records (of the filter's layer) matching any of ``terms``;
    ``counts`` (records per term) and ``total`` (records in the layer), read from the index when
    not given, decide the pruning (``informative``: a vector list stands beside, see ``prune``)."""
    layer = layer_of(flt)
    total = index.size(layer) if total is None else total
    big = total >= PRUNE_MIN_RECORDS and len(terms) >= 2
    if len(terms) < 2 and not informative:
        counts = {}
    elif counts is None:
        counts = index.document_counts(layer, terms)
    kept = prune(terms, total, counts, informative=informative)
    if not kept:
        return []
    if not big or len(kept) < 2:
        return index.keyword(tenant, flt, kept, k)
    first = index.keyword(tenant, flt, kept[:MAX_PAIRED_TERMS], k, min_match=2)
    if len(first) >= k:
        return first
    return two_terms_first(first, index.keyword(tenant, flt, kept, k), k)
