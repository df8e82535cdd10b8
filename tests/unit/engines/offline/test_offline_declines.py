"""Offline extraction: a reply that only turns down an offer of more help ("No, I'm good for now.
Thanks!" to "Anything else?") makes no atom; a "no" that says something of the speaker ("No, I
don't have pets") still does."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memstrata.engines.offline import extract_window
from memstrata.models import ExtractionWindow

WindowFactory = Callable[..., ExtractionWindow]


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        (
            "Would you like to explore another topic or need help with a specific type of problem?",
            "No, I think I'm good for now. Thanks for the help with my probability problems!",
        ),
        (
            "Is there anything else you'd like to explore or any other problems you're working on?",
            "Not really, I think I've got a good handle on this for now. Thanks for all your help though!",
        ),
        ("Anything else I can help you with today?", "Nope, that's all for now."),
        ("Would you like me to walk you through another example?", "No thanks, I'm all set."),
        ("Do you have any other questions?", "No, I'll reach out if I have more questions."),
    ],
)
def test_a_reply_only_declining_more_help_makes_no_atom(
    window: WindowFactory, question: str, reply: str
) -> None:
    turns = [
        (None, "That covers the setup. " + question, "assistant"),
        (None, reply, "user"),
    ]
    assert extract_window(window(turns)) == []


@pytest.mark.parametrize(
    ("turns", "needle"),
    [
        (
            [
                (None, "Would you like me to suggest some vets nearby?", "assistant"),
                (None, "No, I don't have pets.", "user"),
            ],
            "pets",
        ),
        (
            [
                (None, "Is there anything else I can help you with in Lisbon?", "assistant"),
                (None, "No, I moved to Porto last month.", "user"),
            ],
            "Porto",
        ),
        (
            [
                (None, "Anything else I can help with?", "assistant"),
                (None, "No, I'm good for now. I start at the clinic on Monday, though.", "user"),
            ],
            "clinic",
        ),
        ([("Bo", "Do you have a car?"), ("Ann", "No, not really.")], "answered: No"),
    ],
)
def test_a_no_that_says_something_still_makes_an_atom(
    window: WindowFactory, turns: list[tuple[str | None, str, str]], needle: str
) -> None:
    found = [d.content for d in extract_window(window(turns))]
    assert any(needle in c for c in found), found
