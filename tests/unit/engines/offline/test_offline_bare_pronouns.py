"""Offline extraction: a sentence whose one thing is a bare "it" / "that" / "this" ("Highly
recommend it for sure!", "I love it!") makes no atom; one that names something besides it ("I
sold it to Ana", "I love this book") or a date still does, and so does a bare answer stored with
the question that names its thing."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memstrata.engines.offline import extract_window
from memstrata.models import AtomDraft, ExtractionWindow

WindowFactory = Callable[..., ExtractionWindow]


def contents(drafts: list[AtomDraft]) -> list[str]:
    return [d.content for d in drafts]


def test_the_bare_recommendation_goes_and_the_book_stays(window: WindowFactory) -> None:
    turns = [
        ("Mel", "I've been reading a lot lately."),
        (
            "Caro",
            'I loved "Becoming Nicole" by Amy Ellis Nutt. It made me feel connected and gave me hope. '
            "Highly recommend it for sure!",
        ),
    ]
    found = contents(extract_window(window(turns)))
    assert any("Becoming Nicole" in c for c in found), found
    assert not any("recommend" in c and "Becoming Nicole" not in c for c in found), found


@pytest.mark.parametrize(
    "reply",
    [
        "Highly recommend it!",
        "I love it!",
        "Oh wow, I'll try that.",
        "Can't wait to see it!",
        "I would definitely recommend it!",
        "I'm so proud of it.",
        "Yeah, I'll have to check it out sometime!",
        "I won't forget that.",
    ],
)
def test_a_sentence_whose_one_thing_is_a_bare_pronoun_makes_no_atom(
    window: WindowFactory, reply: str
) -> None:
    turns = [("Mel", "We went to the new pottery studio downtown."), ("Caro", reply)]
    assert extract_window(window(turns, background=1)) == []


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        ("I love it in Lisbon.", "Lisbon"),
        ("I sold it to Ana.", "Ana"),
        ("It's my grandmother's ring.", "grandmother's ring"),
        ("I love this book.", "book"),
        ("My mom loved it.", "mom"),
        ("Kids loved it.", "Kids"),
        ("I'll try it on Saturday.", "13 May 2023"),
        ("I'm allergic to it.", "allergic"),
        ("I've tried it 3 times.", "3 times"),
    ],
)
def test_a_pronoun_beside_something_named_keeps_its_atom(
    window: WindowFactory, reply: str, needle: str
) -> None:
    turns = [("Mel", "We went to the new pottery studio downtown."), ("Caro", reply)]
    found = contents(extract_window(window(turns, background=1)))
    assert any(needle in c for c in found), found


def test_a_bare_answer_stays_with_the_question_naming_its_thing(window: WindowFactory) -> None:
    turns = [("Mel", "Have you read Becoming Nicole by Amy Ellis Nutt?"), ("Caro", "I love it!")]
    found = contents(extract_window(window(turns)))
    assert any("Becoming Nicole" in c and "love" in c for c in found), found
