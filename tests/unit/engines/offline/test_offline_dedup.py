"""Offline dedup: skip what is known, update what a draft improves, store the rest."""

from __future__ import annotations

from typing import Any

import pytest

from memstrata.engines.offline import OfflineDeduplicator
from memstrata.engines.offline.l1.dedup import decide, jaccard, normalise, tokens
from memstrata.models import Atom, AtomDraft, AtomType, DedupAction, Tenant


def atom(id_: str, content: str, **metadata: Any) -> Atom:
    return Atom(id=id_, tenant=Tenant(), type=AtomType.PERSONA, content=content, metadata=dict(metadata))


def draft(content: str, **metadata: Any) -> AtomDraft:
    return AtomDraft(AtomType.PERSONA, content, metadata=metadata)


def test_normalise_folds_case_punctuation_and_spaces() -> None:
    assert normalise("  Ann LOVES jazz!!  (a lot) ") == "ann loves jazz a lot"
    assert jaccard(tokens("a b c d"), tokens("a b c e")) == pytest.approx(3 / 5)


def test_equal_text_is_skipped() -> None:
    [d] = decide([draft("Ann loves jazz.")], [[atom("a1", "ann loves   JAZZ")]])
    assert (d.index, d.action, d.targets) == (0, DedupAction.SKIP, ())


def test_near_duplicate_that_adds_nothing_is_skipped() -> None:
    cand = atom("a1", "Ann moved to Oslo with her two cats and her husband.")
    [d] = decide([draft("Ann moved to Oslo with her two cats and husband.")], [[cand]])
    assert d.action is DedupAction.SKIP


def test_more_complete_draft_updates_the_candidate() -> None:
    cand = atom("a1", "Ann works as a nurse in Porto")
    [d] = decide([draft("Ann works as a nurse in Porto at the city hospital")], [[cand]])
    assert (d.action, d.targets) == (DedupAction.UPDATE, ("a1",))


def test_newer_similar_draft_updates_the_candidate() -> None:
    cand = atom("a1", "Ann has two cats named Tom and Bo and a dog named Rex", mentioned_at="2023-01-01")
    new = draft("Ann has three cats named Tom and Bo and a dog named Rex", mentioned_at="2023-06-01")
    [d] = decide([new], [[cand]])
    assert (d.action, d.targets) == (DedupAction.UPDATE, ("a1",))


def test_unrelated_draft_is_stored() -> None:
    [d] = decide([draft("Ann plays the violin every evening")], [[atom("a1", "Ann loves jazz")]])
    assert (d.action, d.targets) == (DedupAction.STORE, ())


def test_same_event_on_another_day_is_stored() -> None:
    cand = atom("a1", "Ann went to the gym on 7 May 2023", activity_start="2023-05-07")
    new = draft("Ann went to the gym on 14 May 2023", activity_start="2023-05-14")
    [d] = decide([new], [[cand]])
    assert d.action is DedupAction.STORE


def test_targets_only_come_from_the_drafts_own_candidates() -> None:
    drafts = [draft("Ann works as a nurse in Porto at the city hospital"), draft("Bo likes chess")]
    candidates = [[atom("a1", "Ann works as a nurse in Porto")], [atom("b1", "Bo likes chess a lot, really")]]
    out = decide(drafts, candidates)
    assert [d.index for d in out] == [0, 1]
    for d in out:
        assert set(d.targets) <= {a.id for a in candidates[d.index]}
    assert out[0].targets == ("a1",)


def test_best_matching_candidate_is_the_target() -> None:
    cands = [atom("far", "Ann works as a nurse"), atom("near", "Ann works as a nurse in Porto")]
    [d] = decide([draft("Ann works as a nurse in Porto at the city hospital")], [cands])
    assert d.targets == ("near",)


def test_duplicate_drafts_in_one_batch() -> None:
    out = decide([draft("Ann loves jazz"), draft("ann loves jazz!")], [[], []])
    assert [d.action for d in out] == [DedupAction.STORE, DedupAction.SKIP]
    assert out[1].targets == ()


def test_missing_candidate_lists_mean_no_candidates() -> None:
    assert decide([draft("Ann loves jazz")], [])[0].action is DedupAction.STORE


async def test_port_method_is_deterministic() -> None:
    drafts = [draft("Ann loves jazz"), draft("Ann works as a nurse in Porto at the city hospital")]
    cands = [[atom("a1", "Ann loves jazz")], [atom("a2", "Ann works as a nurse in Porto")]]
    dedup = OfflineDeduplicator()
    first = await dedup.decide(drafts, cands)
    assert first == await dedup.decide(drafts, cands)
    assert [d.action for d in first] == [DedupAction.SKIP, DedupAction.UPDATE]


def test_newer_draft_that_says_less_does_not_replace_a_fuller_atom() -> None:
    cand = atom("a1", "Ann went to a support group in Porto and it was powerful", mentioned_at="2023-05-01")
    [d] = decide([draft("Ann went to a support group in Porto", mentioned_at="2023-06-01")], [[cand]])
    assert d.action is DedupAction.SKIP


def test_older_similar_draft_is_skipped() -> None:
    cand = atom("a1", "Ann has three cats named Tom and Bo and a dog named Rex", mentioned_at="2023-06-01")
    new = draft("Ann has two cats named Tom and Bo and a dog named Rex", mentioned_at="2023-01-01")
    [d] = decide([new], [[cand]])
    assert d.action is DedupAction.SKIP
