"""A question in the user's own first person reaches the facts they stated (``retrieval/asker.py``):
the relevance floor lets it through and recall injects the fact, on SQLite and PostgreSQL, while
off-topic questions (first person or not) still find nothing. The bundled model: what is judged
is how close a question is to a fact in meaning, which a hashing embedder cannot say."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import FakeClock, Memory

NAMED = [
    ("I moved to Lisbon last week.", "Lisbon"),
    ("I work as a nurse at the children's hospital.", "nurse"),
    ("My dog is called Biscuit and he loves the beach.", "Biscuit"),
    ("We decided to keep the orders table in PostgreSQL and move events to Kafka.", "Kafka"),
]
QUESTIONS = [
    ("where do I live?", "Lisbon"),
    ("What do I do for work?", "nurse"),
    ("what's my dog called?", "Biscuit"),
    ("What did I decide about the orders table?", "Kafka"),
]
OFF_TOPIC = [
    "How do I configure TLS on a Kubernetes ingress?",
    "What is my blood type?",
    "What is the boiling point of mercury?",
]


def tell(mem: Memory, user: str, name: str | None) -> None:
    turns = [{"role": "user", "content": text} | ({"name": name} if name else {}) for text, _ in NAMED]
    mem.capture(turns, session_key="chat", user_id=user)
    mem.end_session("chat", user_id=user)  # atoms now; no persona yet, so recall must inject them


def first_hits(mem: Memory, user: str) -> list[str]:
    found = []
    for question, label in QUESTIONS:
        hits = mem.search(question, user_id=user)
        assert hits, f"{question!r} found nothing"
        found.append(label if label in hits[0].content else hits[0].content)
    return found


@pytest.mark.parametrize("name", ["Maya", None])
def test_first_person_questions_reach_the_users_own_facts(home: Path, name: str | None) -> None:
    with Memory.open(home, clock=FakeClock()) as mem:
        tell(mem, "u", name)
        assert first_hits(mem, "u") == [label for _, label in QUESTIONS]
        assert "Lisbon" in mem.recall("where do I live?", user_id="u").prepend_context
        for question in OFF_TOPIC:
            assert not mem.search(question, user_id="u"), question
            assert mem.recall(question, user_id="u").prepend_context == ""


def test_two_people_speaking_as_the_user_are_neither_read_as_i(home: Path) -> None:
    """A conversation between two named people stored as one tenant's user messages (LoCoMo's
    shape): "I" could be either, so the question is searched as asked."""
    with Memory.open(home, clock=FakeClock()) as mem:
        mem.capture(
            [
                {"role": "user", "name": "Maya", "content": "I moved to Lisbon last week."},
                {"role": "user", "name": "Tom", "content": "I live in Porto with my cat."},
            ],
            session_key="chat",
            user_id="pair",
        )
        mem.end_session("chat", user_id="pair")
        hits = mem.search("where do I live?", user_id="pair", min_score=0)
        assert all("read_as_user" not in h.explain for h in hits)


def test_first_person_questions_on_postgres(postgres_url: str) -> None:
    pytest.importorskip("psycopg")
    with Memory.open(postgres_url, clock=FakeClock()) as mem:
        assert isinstance(mem, Memory)  # a database URL, not a server's
        tell(mem, "pg-maya", "Maya")
        assert first_hits(mem, "pg-maya") == [label for _, label in QUESTIONS]
        assert not mem.search(OFF_TOPIC[0], user_id="pg-maya")
