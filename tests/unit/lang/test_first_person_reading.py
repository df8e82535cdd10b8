"""English reads a question's first person as said of someone else (``Language.as_said_of``), the
verb agreeing; a text without a first person has no reading."""

from __future__ import annotations

import pytest

from memstrata import lang


@pytest.mark.parametrize(
    ("asked", "read"),
    [
        ("where do I live?", "where does Maya live?"),
        ("what's my dog called?", "what's Maya's dog called?"),
        ("What did I decide about the schema?", "What did Maya decide about the schema?"),
        ("Am I allergic to anything?", "is Maya allergic to anything?"),
        ("I'm flying to Rome, what should I eat?", "Maya is flying to Rome, what should Maya eat?"),
        ("how have i been sleeping", "how has Maya been sleeping"),
        ("Can you suggest a dinner for me?", "Can you suggest a dinner for Maya?"),
        ("I have a cat and I've got a dog", "Maya has a cat and Maya has got a dog"),
    ],
)
def test_english_reads_the_first_person_as_said_of_someone(asked: str, read: str) -> None:
    assert lang.get("en").as_said_of(asked, "Maya") == read


@pytest.mark.parametrize(
    "text", ["bananas", "What is the boiling point of mercury?", "Where does Maya live?"]
)
def test_a_text_without_a_first_person_has_no_reading(text: str) -> None:
    assert lang.get("en").as_said_of(text, "Maya") is None


def test_a_pack_without_the_rule_reads_nothing() -> None:
    assert lang.get("zh").as_said_of("我住在哪里?", "用户") is None
    assert lang.get("en").nameless_user == "the user"
