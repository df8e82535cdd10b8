"""Standing instructions a user gives the assistant, told apart from one-off tasks."""

from __future__ import annotations

import pytest

from memstrata.engines.offline.l1.instructions import PRIORITY, STRICT_PRIORITY, detect


@pytest.mark.parametrize(
    ("text", "priority"),
    [
        ("Always answer in French.", STRICT_PRIORITY),
        ("Never use emojis.", STRICT_PRIORITY),
        ("Don't ever mention my ex.", STRICT_PRIORITY),
        ("I want you to always cite sources.", STRICT_PRIORITY),
        ("Answer in French.", PRIORITY),
        ("Please don't use emojis.", PRIORITY),
        ("Keep your answers short.", PRIORITY),
        ("From now on, use metric units.", PRIORITY),
        ("Use bullet points.", PRIORITY),
        ("Be concise.", PRIORITY),
        ("I prefer short answers.", PRIORITY),
        ("Call me Sam.", PRIORITY),
        ("Remember that my cat is called Tom.", PRIORITY),
    ],
)
def test_standing_instructions(text: str, priority: int) -> None:
    found = detect(text, "User")
    assert found is not None
    assert found.priority == priority


@pytest.mark.parametrize(
    "text",
    [
        "Explain quantum computing.",
        "Write a poem about cats.",
        "Give me a recipe for pancakes.",
        "I want you to write a story.",
        "Don't worry about it.",
        "Could you always answer in French?",
        "I went to Paris last year.",
        "Please give the detailed management of bell's palsy.",  # a task, however "detailed"
        "Note that regularization is applied by default.",  # a pasted document's note
    ],
)
def test_not_instructions(text: str) -> None:
    assert detect(text, "User") is None


def test_wording_names_the_speaker_and_the_assistant() -> None:
    call = detect("Call me Sam.", "User")
    assert call is not None
    assert call.content == "User wants to be called Sam."
    remember = detect("Remember that my cat is called Tom.", "Ann")
    assert remember is not None
    assert remember.content == "Ann asked the assistant to remember: Ann's cat is called Tom."
    keep = detect("Keep your answers short.", "Ann")
    assert keep is not None
    assert keep.content == "Ann instructed the assistant: Keep the assistant's answers short."
