"""What the keyword index holds for a message (``retrieval/documents.py``): the previous turn for a
short message only, code blocks as their words, first person named only for a named speaker."""

from __future__ import annotations

from memstrata.models import Message, Role, Tenant
from memstrata.retrieval.documents import CONTEXT_CHARS, CONTEXT_FOR_CHARS, code_words, message_body

T = Tenant("u", "default")
DAY = 1_780_000_000_000


def msg(content: str, role: Role = Role.USER, name: str | None = None, seq: int = 1) -> Message:
    return Message(
        id=f"m{seq}",
        tenant=T,
        session_key="s",
        session_id="s",
        role=role,
        content=content,
        timestamp=DAY,
        recorded_at=DAY,
        name=name,
        seq=seq,
    )


def test_a_short_answer_is_indexed_with_the_question_before_it() -> None:
    question = msg("Do you still go climbing at the gym near the river?", Role.ASSISTANT)
    body = message_body(msg("Yes, twice a week."), question)
    assert "climbing" in body


def test_a_long_message_is_indexed_alone() -> None:
    question = msg("How should I shard the invoices table?", Role.USER)
    answer = msg("Partition by tenant. " * (CONTEXT_FOR_CHARS // 10), Role.ASSISTANT)
    assert "shard" not in message_body(answer, question)


def test_only_the_start_of_a_long_previous_turn_is_context() -> None:
    previous = msg("start " + "filler " * CONTEXT_CHARS + "buried", Role.ASSISTANT)
    body = message_body(msg("Sounds good."), previous)
    assert "start" in body and "buried" not in body


def test_assistant_code_is_indexed_as_its_distinct_words() -> None:
    reply = "Use this:\n```python\nconn = psycopg.connect(dsn)\nconn.autocommit = True\n```\nDone."
    body = message_body(msg(reply, Role.ASSISTANT), None)
    assert "psycopg" in body and "autocommit" in body
    assert (
        body.split().count("conn") == 1
    )  # each word of the block once: its repeats do not lengthen the record


def test_code_words_leave_text_without_fences_alone() -> None:
    assert code_words("plain `inline` words") == "plain `inline` words"


def test_a_nameless_speaker_keeps_the_first_person() -> None:
    body = message_body(msg("I moved to Lisbon last week."), None)
    assert "I moved to Lisbon" in body


def test_a_named_speaker_is_named() -> None:
    body = message_body(msg("I moved to Lisbon last week.", name="Maya"), None)
    assert "Maya moved to Lisbon" in body
