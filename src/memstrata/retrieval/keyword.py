"""Keyword ranking policy, the same on every backend: which query terms to send, and in what order
to ask for matches. The store only answers BM25 top-K and document counts.

A term found in more than ``COMMON_SHARE`` (half) of a layer's records is dropped from the query
from ``COMMON_MIN_RECORDS`` records on (the rarest term stays): its idf is near zero, so all it does
is rank every record holding it by length. A user's own name in a one-user store is such a term: "What food should I avoid offering
Maya?" matched every atom through "Maya", and the shortest ones outranked the peanut allergy that
only the vector found (the demo's search).

A term found in every record of the tenant's layer says nothing of any of them: a list ranked on
it alone is the tenant's records by length. Beside a vector list (``informative``) such a term is
dropped whatever the index's size, the last one too: a keyword list with no informative term is
empty and the vector list decides. The README's quickstart asked "where does Maya live?" of three
messages and two atoms, each holding "Maya" (atoms name her; a message's indexed text names its
speaker), and the keyword lists put the sister's visit first by length alone, a full
reciprocal-rank place above the Lisbon move the vector list ranked first. The search runs in one
tenant, so that is where "every record" is counted (``held_everywhere``): counted over the whole
index, a store of many users (a gateway's; an eval set imported one conversation per tenant) held
"Maya" in a few of its records only, and the rule never fired for Maya's. Alone (keyword mode, no
embedder) the list is the ranking, and the rarest term still stays.

The shares below stay index-wide: they stand for BM25's idf, which both backends compute over the
whole index.

On a big index (``PRUNE_MIN_RECORDS`` records or more) two things keep a query fast without
changing what ranks first:
- a term found in more than ``PRUNE_SHARE`` of the records adds almost nothing to BM25 (its idf is
  near zero) but costs a score for every record it matches: it is dropped (the rarest is kept);
- the records holding at least two of the terms are asked for first (few, cheap to score; their
  BM25 order is the OR query's); the full OR query fills up only when they are fewer than ``k``.
Small indexes are left alone: scoring every match is cheap there.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from memstrata.models import AtomFilter, Layer, MessageFilter, Scored, Tenant, layer_of
from memstrata.ports import SearchIndex

COMMON_SHARE = 0.5
COMMON_MIN_RECORDS = 10  # below this a share says nothing (2 of 3 records is not "most")
PRUNE_MIN_RECORDS = 5_000
PRUNE_SHARE = 0.2
MAX_PAIRED_TERMS = 8  # at most 28 pairs in the two-term-first query


def prune(
    terms: Sequence[str],
    total: int,
    counts: Mapping[str, int],
    *,
    everywhere: Collection[str] | None = None,
) -> list[str]:
    """``terms`` without those found in more than ``COMMON_SHARE`` of ``total`` records, or on a
    big index more than ``PRUNE_SHARE`` (``counts``: records per term). Never empty while ``terms``
    has a non-blank term: the rarest one stays. ``everywhere`` (given when a vector list stands
    beside: the terms every record of the tenant's layer holds, ``held_everywhere``): first
    without those, and empty when only such are left."""
    kept = [t for t in terms if t.strip()]
    if everywhere is not None:
        kept = [t for t in kept if t not in everywhere]
    if len(kept) < 2:
        return kept
    if total < COMMON_MIN_RECORDS:
        return kept
    common = [t for t in kept if counts.get(t, 0) > _share(total) * total]
    rest = [t for t in kept if t not in common]
    return rest or [min(kept, key=lambda t: counts.get(t, 0))]


def uninformative(term: str, total: int, counts: Mapping[str, int]) -> bool:
    """Whether every one of ``total`` records (a tenant's, of a layer) holds ``term`` (``counts``:
    records per term): it can tell none of them apart."""
    return total > 0 and counts.get(term, 0) >= total


def held_everywhere(
    index: SearchIndex,
    tenant: Tenant,
    layer: Layer,
    terms: Sequence[str],
    counts: Mapping[str, int],
    total: int,
) -> set[str]:
    """The ``terms`` every one of the tenant's records of ``layer`` holds. Only a term the whole
    index holds at least as often (``counts``, index-wide) can be one, so only those are counted
    in the tenant: a search pays a count of its tenant's records and, per layer, one keyword
    query's worth per such term (common words and the tenant's names: on the LoCoMo dev store
    none in 47 % of the layers searched, at most two in 99 %).
    A term more common than ``prune`` keeps (over its share of the index's ``total`` records) is
    not counted in the tenant: ``prune`` drops it anyway unless it is the rarest left, and its
    posting list is the long one (a word every user's records hold, "the user" of every nameless
    user's atoms), which would make the count cost what the index holds, not what the query
    reads. It is judged over the whole index, as before per-tenant counts.
    An index-wide count under the truth (kept a while by ``TermCounts`` while the tenant grew, or
    PostgreSQL's planner estimate of a common term's) only lets a term through, as counting over
    the whole index did."""
    records = index.tenant_size(tenant, layer)
    maybe = [t for t in dict.fromkeys(terms) if t.strip() and records and counts.get(t, 0) >= records]
    common = {t for t in maybe if total >= COMMON_MIN_RECORDS and counts.get(t, 0) > _share(total) * total}
    held = {t for t in common if uninformative(t, total, counts)}
    rare = [t for t in maybe if t not in common]
    if rare:
        found = index.tenant_document_counts(tenant, layer, rare)
        held |= {t for t in rare if uninformative(t, records, found)}
    return held


def _share(total: int) -> float:
    """The share of an index's records over which ``prune`` drops a term."""
    return PRUNE_SHARE if total >= PRUNE_MIN_RECORDS else COMMON_SHARE


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
    everywhere = held_everywhere(index, tenant, layer, terms, counts, total) if informative else None
    kept = prune(terms, total, counts, everywhere=everywhere)
    if not kept:
        return []
    if not big or len(kept) < 2:
        return index.keyword(tenant, flt, kept, k)
    first = index.keyword(tenant, flt, kept[:MAX_PAIRED_TERMS], k, min_match=2)
    if len(first) >= k:
        return first
    return two_terms_first(first, index.keyword(tenant, flt, kept, k), k)
