"""The ranking core, backend-free: reciprocal-rank fusion, diversification, keyword term policy."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import cast

import pytest

from memstrata.models import Hit, Layer, Scored, Tenant
from memstrata.ports import SearchIndex
from memstrata.retrieval.fusion import finding_rrf, rrf
from memstrata.retrieval.keyword import (
    PRUNE_MIN_RECORDS,
    held_everywhere,
    prune,
    two_terms_first,
    uninformative,
)
from memstrata.retrieval.search import chosen, ranked


def test_rrf_sums_reciprocal_ranks_over_the_lists_holding_a_key() -> None:
    fused = dict(rrf([["a", "b"], ["b", "c"]], k=10))
    assert fused["a"] == pytest.approx(1 / 11)
    assert fused["b"] == pytest.approx(1 / 12 + 1 / 11)
    assert fused["c"] == pytest.approx(1 / 12)


def test_rrf_orders_by_score_and_keeps_first_seen_order_on_ties() -> None:
    assert [k for k, _ in rrf([["x", "y"], ["y", "x"]], k=60)] == ["x", "y"]
    assert [k for k, _ in rrf([["a"], ["b"], ["c", "b"]], k=60)] == ["b", "a", "c"]


def test_rrf_counts_a_record_deep_in_a_list() -> None:
    deep = [f"d{i}" for i in range(200)] + ["late"]
    assert "late" in dict(rrf([deep, ["late"]], k=10))


def test_rrf_weights_scale_each_list() -> None:
    fused = dict(rrf([["a"], ["b"]], k=10, weights=[2.0, 1.0]))
    assert fused["a"] == pytest.approx(2 * fused["b"])


def test_rrf_of_nothing_is_empty() -> None:
    assert rrf([], k=10) == []
    assert rrf([[], []], k=10) == []


# The lists of one search: keyword then vector for atoms (L1), then for messages (L0). Message "m"
# is 3rd by meaning among messages and its atom "a(m)" 3rd by meaning among atoms; "kw" is first by
# words among atoms and nowhere else.
LISTS = [["kw", "x1"], ["x1", "x2", "a(m)"], ["y1"], ["y1", "y2", "m"]]
SOURCES = {"kw": frozenset({"k"}), "a(m)": frozenset({"m"}), "m": frozenset({"m"}), "x1": frozenset({"x"})}


def test_a_finding_found_as_its_message_and_as_its_atom_ranks_as_both_lists_agreeing() -> None:
    alone = [key for key, _ in rrf(LISTS, 5.0, [1.0] * 4)]
    assert alone.index("kw") < alone.index("a(m)")  # each form scored on its own lists
    fused = dict(finding_rrf(LISTS, 5.0, [1.0] * 4, SOURCES))
    assert fused["a(m)"] == pytest.approx(2 / 8) == fused["m"]  # 3rd in both vector lists
    assert fused["a(m)"] > fused["kw"] == pytest.approx(1 / 6)


def test_the_form_its_own_lists_rank_best_leads_a_finding() -> None:
    lists = [["a(m)"], ["m"], ["b(m)"]]
    sources = {key: frozenset({"m"}) for key in ("a(m)", "m", "b(m)")}
    fused = finding_rrf(lists, 5.0, [1.0, 0.5, 1.0], sources)
    assert [key for key, _ in fused] == ["a(m)", "b(m)", "m"]  # equal findings: by own score
    assert [score for _, score in fused] == pytest.approx([2.5 / 6] * 3)


def test_findings_the_lists_tie_go_to_the_record_closer_in_meaning() -> None:
    # The README's quickstart: the Lisbon message first in the messages' vector list and its atom
    # second in the atoms'; the sister's visit the other way round. Which layer was read first
    # used to decide; the cosine does.
    lists = [["visit(a)", "moved(a)"], ["moved", "visit"]]
    sources = {"visit(a)": frozenset({"v"}), "visit": frozenset({"v"})}
    sources |= {"moved(a)": frozenset({"m"}), "moved": frozenset({"m"})}
    closeness = {"visit(a)": 0.60, "moved(a)": 0.598, "moved": 0.68, "visit": 0.65}
    assert next(key for key, _ in finding_rrf(lists, 5.0, [1.0, 1.0], sources)) == "visit(a)"
    fused = finding_rrf(lists, 5.0, [1.0, 1.0], sources, closeness)
    assert [key for key, _ in fused] == ["moved", "moved(a)", "visit(a)", "visit"]
    assert fused[0][1] == fused[2][1]  # the lists cannot tell the findings apart: the same score


def test_the_cosine_does_not_choose_among_one_findings_forms() -> None:
    # The demo: "Maya moved to Lisbon from Porto ..." first among the atoms, its message ("I moved
    # here from Porto ...") first among the messages and closer: the atom, seen first, still leads.
    lists = [["moved(a)"], ["moved"]]
    sources = {"moved(a)": frozenset({"m"}), "moved": frozenset({"m"})}
    fused = finding_rrf(lists, 5.0, [1.0, 1.0], sources, {"moved(a)": 0.64, "moved": 0.70})
    assert [key for key, _ in fused] == ["moved(a)", "moved"]


def test_a_record_drawn_from_several_messages_keeps_its_own_places() -> None:
    lists = [["m1"], ["both"], ["m2"]]
    sources = {"m1": frozenset({"m1"}), "m2": frozenset({"m2"}), "both": frozenset({"m1", "m2"})}
    fused = dict(finding_rrf(lists, 5.0, [1.0] * 3, sources))
    assert fused["both"] == pytest.approx(1 / 6)  # not 3/6 from the messages it names
    assert fused["m1"] == pytest.approx(2 / 6)  # while each message has its place: it says them


def test_finding_rrf_without_sources_is_rrf() -> None:
    assert finding_rrf(LISTS, 5.0, [1.0, 0.5, 1.0, 1.0], {}) == rrf(LISTS, 5.0, [1.0, 0.5, 1.0, 1.0])


def hit(i: str, sources: tuple[str, ...]) -> Hit:
    return Hit(Layer.L1, i, 1.0, i, sources)


def diversify(hits: Sequence[Hit]) -> list[str]:
    """The ids ``chosen`` keeps of ``hits`` diversified, with no limit and no floors."""
    return [h.id for h in chosen(hits, len(hits), 0.0, 0.0, diversified=True)]


def test_diversify_leaves_out_hits_whose_sources_are_covered_by_better_ones() -> None:
    hits = [hit("atom", ("m1", "m2")), hit("msg", ("m1",)), hit("other", ("m3",))]
    assert diversify(hits) == ["atom", "other"]


def test_diversify_keeps_order_and_sourceless_hits() -> None:
    hits = [hit("a", ()), hit("b", ()), hit("c", ("m1",)), hit("d", ("m1",)), hit("e", ("m2",))]
    assert diversify(hits) == ["a", "b", "c", "e"]


def eager(
    hits: Sequence[Hit], limit: int, min_score: float, query_floor: float, diversified: bool
) -> list[str]:
    """What search returned before it judged its candidates lazily: the floor over every judged
    hit, then ``min_score``, then diversification, then the limit."""
    if not any(h.score >= query_floor for h in hits):
        return []
    left = [h for h in hits if h.score >= min_score]
    if diversified:
        covered: set[str] = set()
        fresh = []
        for h in left:
            sources = set(h.source_message_ids)
            if not (sources and sources <= covered):
                fresh.append(h)
            covered |= sources
        left = fresh
    return [h.id for h in left[:limit]]


@pytest.mark.parametrize("seed", range(300))
def test_chosen_reading_lazily_keeps_what_the_eager_filters_kept(seed: int) -> None:
    rng = random.Random(seed)
    hits = [
        Hit(
            Layer.L1,
            f"h{i}",
            rng.random(),
            "",
            tuple(f"m{rng.randrange(8)}" for _ in range(rng.randrange(3))),
        )
        for i in range(rng.randrange(40))
    ]
    limit, min_score, floor = rng.randrange(1, 20), rng.random() * 0.5, rng.random()
    for diversified in (True, False):
        got = chosen(hits, limit, min_score, floor, diversified=diversified)
        assert [h.id for h in got] == eager(hits, limit, min_score, floor, diversified)


def test_chosen_stops_reading_once_the_limit_is_kept_and_the_floor_met() -> None:
    read: list[str] = []

    def judged() -> Iterator[Hit]:
        for i in range(10):
            read.append(f"h{i}")
            yield Hit(Layer.L1, f"h{i}", 0.9 if i == 1 else 0.4, "", (f"m{i}",))

    assert [h.id for h in chosen(judged(), 3, 0.3, 0.8, diversified=True)] == ["h0", "h1", "h2"]
    assert read == ["h0", "h1", "h2"]


def test_chosen_reads_on_for_the_floor_and_finds_nothing_without_it() -> None:
    weak = [Hit(Layer.L1, f"h{i}", 0.4, "", ()) for i in range(5)]
    assert chosen(weak, 2, 0.3, 0.8, diversified=True) == ()
    late = [*weak, Hit(Layer.L1, "strong", 0.9, "", ())]
    assert [h.id for h in chosen(late, 2, 0.3, 0.8, diversified=True)] == ["h0", "h1"]


def test_ranked_numbers_the_list_and_keeps_the_fused_rank_in_explain() -> None:
    # What the floor and diversification left of a fused ranking: places 1, 2, 5 and 6.
    left = [
        replace(hit(i, ()), rank=r, explain={"fused": 0.1})
        for i, r in (("a", 1), ("b", 2), ("c", 5), ("d", 6))
    ]
    out = ranked(left)
    assert [(h.id, h.rank) for h in out] == [("a", 1), ("b", 2), ("c", 3), ("d", 4)]
    assert [h.explain["fused_rank"] for h in out] == [1, 2, 5, 6]
    assert out[2].explain["fused"] == 0.1


def test_prune_keeps_terms_of_half_a_small_index_or_less() -> None:
    total = PRUNE_MIN_RECORDS - 1
    assert prune(["trip", "kayak"], total, {"trip": total // 2, "kayak": 3}) == ["trip", "kayak"]
    assert prune(["北京", "烤鸭"], 3, {"北京": 3, "烤鸭": 2}) == ["北京", "烤鸭"]  # too few records to judge


def test_prune_drops_a_term_most_records_of_a_small_index_hold() -> None:
    # A user's own name in a one-user store: every atom holds it, so it ranks them by length only.
    total = 15
    assert prune(["food", "avoid", "maya"], total, {"food": 2, "avoid": 0, "maya": 15}) == ["food", "avoid"]
    assert prune(["maya", "lisbon"], total, {"maya": 15, "lisbon": 7}) == ["lisbon"]
    assert prune(["maya"], total, {"maya": 15}) == ["maya"]  # the only term stays


def test_prune_drops_terms_found_in_most_records_of_a_big_index() -> None:
    total = 10 * PRUNE_MIN_RECORDS
    counts = {"trip": total // 2, "kayak": 3, "oslo": 40}
    assert prune(["trip", "kayak", "oslo"], total, counts) == ["kayak", "oslo"]


def test_prune_keeps_the_rarest_term_when_every_term_is_common() -> None:
    total = 10 * PRUNE_MIN_RECORDS
    counts = {"went": total // 2, "day": total // 3}
    assert prune(["went", "day"], total, counts) == ["day"]


def test_beside_a_vector_list_a_term_every_record_holds_is_dropped_the_last_one_too() -> None:
    # The README's quickstart: three messages, each naming Maya; "live" is in none of them.
    assert prune(["maya", "live"], 3, {"maya": 3, "live": 0}, everywhere={"maya"}) == ["live"]
    assert prune(["maya"], 3, {"maya": 3}, everywhere={"maya"}) == []  # nothing to rank by
    assert prune(["maya", "ana"], 3, {"maya": 3, "ana": 1}, everywhere={"maya"}) == ["ana"]
    assert prune(["maya", "ana"], 3, {"maya": 2, "ana": 1}, everywhere=set()) == ["maya", "ana"]
    # alone, the keyword list is the ranking: the term stays
    assert prune(["maya"], 3, {"maya": 3}) == ["maya"]
    assert prune(["maya", "live"], 3, {"maya": 3, "live": 0}) == ["maya", "live"]


def test_a_term_is_uninformative_only_when_every_record_holds_it() -> None:
    assert uninformative("maya", 3, {"maya": 3})
    assert not uninformative("maya", 4, {"maya": 3})
    assert not uninformative("maya", 0, {})  # an empty index


class _TenantCounts:
    """The two per-tenant reads ``held_everywhere`` makes, answering from a table and noting the
    terms counted."""

    def __init__(self, size: int, held: dict[str, int]) -> None:
        self.size, self.held, self.counted = size, held, list[str]()

    def tenant_size(self, tenant: Tenant, layer: Layer) -> int:
        return self.size

    def tenant_document_counts(self, tenant: Tenant, layer: Layer, terms: Sequence[str]) -> dict[str, int]:
        self.counted += terms
        return {t: self.held.get(t, 0) for t in terms}


def test_a_term_too_common_to_keep_is_judged_over_the_index_and_not_counted_in_the_tenant() -> None:
    # a 10,000-record index of 100 users, the tenant's 100 records all naming "maya"; "user" is in
    # 9,000 records (every nameless user's atoms), all of the tenant's: too common for prune to keep
    # on a big index, so counting it would read a posting list as long as the index
    index = _TenantCounts(100, {"maya": 100, "user": 100})
    tenant = Tenant("maya", "default")
    counts = {"maya": 100, "user": 9_000, "lisbon": 3}
    held = held_everywhere(
        cast(SearchIndex, index), tenant, Layer.L0, ["maya", "user", "lisbon"], counts, 10_000
    )
    assert held == {"maya"}
    assert index.counted == ["maya"]
    # held by every record of the index too, it is held everywhere without a count in the tenant
    index = _TenantCounts(100, {"user": 100})
    assert held_everywhere(
        cast(SearchIndex, index), tenant, Layer.L0, ["user"], {"user": 10_000}, 10_000
    ) == {"user"}
    assert index.counted == []
    # a small store (the README's) is counted in the tenant, whatever the share
    index = _TenantCounts(3, {"maya": 3})
    assert held_everywhere(cast(SearchIndex, index), tenant, Layer.L0, ["maya"], {"maya": 5}, 6) == {"maya"}
    assert index.counted == ["maya"]


def test_prune_drops_blank_terms() -> None:
    assert prune([" ", "kayak"], 10, {}) == ["kayak"]


def test_two_terms_first_ranks_the_rest_below_the_first_list_without_repeats() -> None:
    first = [Scored(1, 5.0), Scored(2, 3.0)]
    rest = [Scored(3, 9.0), Scored(1, 8.0), Scored(4, 1.0)]
    merged = two_terms_first(first, rest, 10)
    assert [s.seq for s in merged] == [1, 2, 3, 4]
    assert [s.score for s in merged] == sorted((s.score for s in merged), reverse=True)


def test_two_terms_first_stops_at_k() -> None:
    first = [Scored(i, 10.0 - i) for i in range(5)]
    assert [s.seq for s in two_terms_first(first, [Scored(9, 1.0)], 3)] == [0, 1, 2]


def test_legs_weigh_keyword_lists_only_beside_a_vector_list() -> None:
    from memstrata.retrieval.legs import Legs

    legs = Legs(None, None, None, [], "hybrid")  # type: ignore[arg-type]
    legs.add("keyword", Layer.L1, [])
    legs.add("vector", Layer.L1, [])
    legs.add("keyword", Layer.L0, [])
    assert legs.weights(0.3) == [0.3, 1.0, 0.3]
    alone = Legs(None, None, None, [], "keyword")  # type: ignore[arg-type]
    alone.add("keyword", Layer.L1, [])
    assert alone.weights(0.3) == [1.0]  # no vector list: the keyword list is the ranking


def test_a_standing_hit_meets_the_floor_and_is_kept_under_min_score() -> None:
    """A standing atom that reached its own floor (``explain["standing"]``) is a finding though its
    relevance is under both floors; the other weak hits are then kept down to ``min_score``."""
    weak = [replace(hit(f"h{i}", (f"m{i}",)), score=0.1) for i in range(3)]
    standing = replace(hit("pref", ("p",)), score=0.0, explain={"relevance": 0.0, "standing": 1})
    assert chosen([*weak, standing], 5, 0.05, 0.22, diversified=True) == (*weak, standing)
    assert chosen(weak, 5, 0.05, 0.22, diversified=True) == ()
