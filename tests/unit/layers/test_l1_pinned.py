"""The pipeline never supersedes a pinned atom: an update or merge naming one stores the draft
as a new atom instead (only an explicit ``update_atom`` replaces a pinned atom)."""

from __future__ import annotations

import pytest

from memstrata.layers.l1.writer import plan_window
from memstrata.models import Atom, AtomDraft, AtomType, DedupAction, DedupDecision, Message, Role, Tenant

T = Tenant("ann")
WINDOW = [Message("m9", T, "s", "s", Role.USER, "I now live in Porto.", 5_000, 5_000, "Ann", seq=9)]
DRAFT = AtomDraft(AtomType.PERSONA, "Ann lives in Porto.", 70, "home", ("m9",))


def old(pinned: bool) -> Atom:
    return Atom(
        "a1",
        T,
        AtomType.PERSONA,
        "Ann lives in Lisbon.",
        70,
        "home",
        ("m1",),
        {},
        "s",
        1,
        1,
        2,
        pinned=pinned,
    )


@pytest.mark.parametrize("action", [DedupAction.UPDATE, DedupAction.MERGE])
def test_an_update_or_merge_of_a_pinned_atom_stores_the_draft_instead(action: DedupAction) -> None:
    decision = DedupDecision(0, action, ("a1",), "Ann lives in Lisbon and Porto.")
    plan = plan_window(T, "s", WINDOW, [DRAFT], [decision], [[old(pinned=True)]], 9_000)
    assert plan.superseded == {}
    assert [(a.content, a.version, a.source_message_ids) for a in plan.new] == [
        ("Ann lives in Porto.", 1, ("m9",))
    ]


@pytest.mark.parametrize("action", [DedupAction.UPDATE, DedupAction.MERGE])
def test_an_unpinned_atom_is_superseded_as_before(action: DedupAction) -> None:
    decision = DedupDecision(0, action, ("a1",), "Ann lives in Lisbon and Porto.")
    plan = plan_window(T, "s", WINDOW, [DRAFT], [decision], [[old(pinned=False)]], 9_000)
    (new,) = plan.new
    assert (
        plan.superseded == {"a1": new.id} and new.version == 3 and set(new.source_message_ids) == {"m1", "m9"}
    )
