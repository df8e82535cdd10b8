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
        # standing rules in the wording real chats use: a habit, a condition on later answers
        ("Always show the SQL you ran when I ask about query plans.", STRICT_PRIORITY),
        ("Please never suggest jQuery, even for quick fixes.", STRICT_PRIORITY),
        ("I'd like you to always add type hints to Python examples.", STRICT_PRIORITY),
        ("Use semantic HTML5 tags when you show me HTML.", PRIORITY),
        ("Whenever I ask for a recipe, give the quantities in grams.", PRIORITY),
        ("Every time you write a shell command, explain each flag.", PRIORITY),
        ("From now on, keep code comments in English.", PRIORITY),
        ("I prefer answers with bullet points over long paragraphs.", PRIORITY),
        ("I'd rather you use metric units.", PRIORITY),
        ("I prefer to buy second-hand furniture whenever possible.", PRIORITY),
        ("Make sure to cite the RFC whenever you mention an HTTP header.", PRIORITY),
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


@pytest.mark.parametrize(
    "text",
    [
        # a request for this turn, however many rule-like words its run-on carries
        "I need help finishing the retry logic for the token refresh, which I've never written before, can you "
        "give me a complete example and make sure to include logging",
        "I'm refactoring the billing module and I want to make sure that the tests still pass, so can you walk "
        "me through the steps in a short list",
        "I'm using Vite 5 and Vitest, and I want to make sure that my imports are formatted in a consistent style.",
        "I want to make sure that every commit message follows a strict format like `feat(scope): summary`.",
        "Just tell me which files you need to see, and I'll make sure to paste them in markdown.",
        "I'm studying for the stats exam and I prefer worked solutions with short steps, can you solve the second "
        "problem for me",
        "I've been learning Rust for a month and I prefer examples, since I've never fixed a borrow checker error "
        "on my own",
        "× 0.75 ≈ 0.56, and then multiply by the remaining factor, so I always end up with the same result, and "
        "I prefer this method",
        # the user's own habits and preferences: persona, not rules for the assistant
        "I never eat shellfish; I prefer fish that is farmed locally.",
        "I'm rewriting the parser, and I prefer detailed explanations to understand each step.",
        "When I asked you yesterday, you said the API was deprecated.",
        "Use precise language, can you explain what a monad is",
    ],
)
def test_one_off_requests_are_not_instructions(text: str) -> None:
    assert detect(text, "User") is None
