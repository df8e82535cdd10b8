"""Offline extraction: a reply that only acknowledges the other's help ("Yeah, that helps a lot!" to
"Does that help?") makes no atom; thanks or replies that carry a fact of the speaker still do."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memstrata.engines.offline import extract_window
from memstrata.models import AtomDraft, ExtractionWindow

WindowFactory = Callable[..., ExtractionWindow]


def contents(drafts: list[AtomDraft]) -> list[str]:
    return [d.content for d in drafts]


def test_thanks_that_tell_of_the_speaker_or_go_on_with_a_fact_keep_it(window: WindowFactory) -> None:
    turns = [
        ("Bo", "Thanks for helping me move into my new flat in Leeds."),
        ("Ann", "Where did you get that lamp?"),
        ("Bo", "Thanks! I got it from my sister."),
        ("Ann", "Thanks Bo, it was amazing being around people who care about the same things as me."),
        ("Bo", "Appreciate your support. It's been a long road back to the ring."),
        ("Ann", "I appreciate the little things in life, like tea on the balcony."),
    ]
    found = " | ".join(contents(extract_window(window(turns))))
    assert "long road back to the ring" in found
    assert "tea on the balcony" in found
    assert "new flat in Leeds" in found
    assert "from Bo's sister" in found
    assert "amazing being around people" in found


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        (
            "Does this help clarify how to use the formula?",
            "Yeah, that helps a lot! Thanks for walking me through it.",
        ),
        ("Is there anything else you'd like to explore or practice?", "Yeah, everything's clear now!"),
        ("Would you like me to add a reminder for it?", "Yes, please!"),
        ("Is there anything I can do to help?", "Appreciate the offer."),
        (
            "Would you like to try another example, or do you have any other questions?",
            "That's really helpful!",
        ),
    ],
)
def test_a_reply_only_acknowledging_a_check_on_help_makes_no_atom(
    window: WindowFactory, question: str, reply: str
) -> None:
    turns = [
        (None, "The area is half the base times the height. " + question, "assistant"),
        (None, reply, "user"),
    ]
    assert extract_window(window(turns)) == []


@pytest.mark.parametrize(
    ("turns", "needle"),
    [
        ([(None, "Do you have any pets?", "assistant"), (None, "Yes.", "user")], "answered: Yes."),
        (
            [
                (None, "Would you like the example in Python or in Rust?", "assistant"),
                (None, "Python.", "user"),
            ],
            "answered: Python.",
        ),
        ([("Bo", "Would you like to join us for dinner on Friday?"), ("Ann", "Sure!")], "answered: Sure!"),
        (
            [("Bo", "Did the new medication help with your headaches?"), ("Ann", "Yes, it helps a lot.")],
            "helps",
        ),
        (
            [
                (None, "Does that help?", "assistant"),
                (None, "Yes, I'll show it to my team at Acme on Friday.", "user"),
            ],
            "team at Acme",
        ),
    ],
)
def test_a_reply_about_the_speaker_or_the_world_still_makes_an_atom(
    window: WindowFactory, turns: list[tuple[str | None, str, str]], needle: str
) -> None:
    found = contents(extract_window(window(turns)))
    assert any(needle in c for c in found), found


@pytest.mark.parametrize(
    "reply",
    [
        "Thanks for walking me through the setup!",
        "Thanks so much for believing in me!",
        "I really appreciate your help.",
        "Really appreciate your support, it means a lot to me.",
    ],
)
def test_thanks_whose_only_first_person_is_the_one_helped_make_no_atom(
    window: WindowFactory, reply: str
) -> None:
    turns = [("Ann", "We went over the whole pipeline together."), ("Bo", reply)]
    assert extract_window(window(turns, background=1)) == []


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        ("Thank you for coming to my party.", "party"),
        ("Thanks for helping me move last Saturday.", "6 May 2023"),
        ("Thanks for showing me your photos of my old school.", "old school"),
    ],
)
def test_thanks_that_tell_of_the_speaker_or_a_day_keep_their_atom(
    window: WindowFactory, reply: str, needle: str
) -> None:
    turns = [("Ann", "We went over the whole pipeline together."), ("Bo", reply)]
    found = contents(extract_window(window(turns, background=1)))
    assert any(needle in c for c in found), found
