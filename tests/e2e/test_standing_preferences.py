"""A preference stated once reaches a later request of the user's own that shares none of its words
(``search.standing_floor``, ``retrieval/search.standing_bar``): "I'm vegan" is found for "which
restaurants would you recommend for me?", whose relevance to it is that of unrelated text,
on SQLite and PostgreSQL; questions about the world, and the user's questions about facts never
stated, still find nothing. The bundled model: what is judged is how close a request is to a
preference in meaning, which a hashing embedder cannot say."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import FakeClock, Memory

PREFERENCE = "I'm vegan, so I never eat meat, fish, eggs or dairy."
FILLER = [
    "Can you explain how a heat pump works in winter?",
    "What is the difference between a Roth IRA and a traditional IRA?",
]
REQUEST = "I'll be in Rome next month. Which restaurants would you recommend for me?"
OFF_TOPIC = [
    "What is the boiling point of mercury?",
    "Who won the 1954 football world cup?",
    "What is my blood type?",
    "How do I configure TLS on a Kubernetes ingress?",
]
# Requests of the user's own on another topic: their standing preferences apply to every request
# of theirs, so those are what they find, and nothing else.
OTHER_REQUESTS = [
    "Can you show me how to configure TLS on a Kubernetes ingress?",
    "Could you summarise the plot of Hamlet for me?",
]


def tell(mem: Memory, user: str) -> str:
    """The preference, then unrelated turns; the preference's message id."""
    turns = [{"role": "user", "content": PREFERENCE, "id": f"{user}-pref"}]
    turns += [{"role": "user", "content": text} for text in FILLER]
    mem.capture(turns, session_key="chat", user_id=user)
    mem.end_session("chat", user_id=user)
    return f"{user}-pref"


def test_a_request_sharing_no_words_finds_the_standing_preference(home: Path) -> None:
    with Memory.open(home, clock=FakeClock()) as mem:
        preference = tell(mem, "u")
        hits = mem.search(REQUEST, user_id="u")
        standing = [h for h in hits if preference in h.source_message_ids and h.explain.get("standing")]
        assert standing, [(h.content, h.explain) for h in hits]
        assert "vegan" in mem.recall(REQUEST, user_id="u").prepend_context
        for question in OFF_TOPIC:
            assert not mem.search(question, user_id="u"), question
        for request in OTHER_REQUESTS:
            assert all(h.explain.get("standing") for h in mem.search(request, user_id="u")), request


def test_without_the_standing_floor_the_request_finds_nothing(home: Path) -> None:
    """What the mechanism adds: the query floor alone silences the request."""
    with Memory.open(home, clock=FakeClock(), search={"standing_floor": 1.0}) as mem:
        tell(mem, "u")
        assert not mem.search(REQUEST, user_id="u")


def test_standing_preferences_on_postgres(postgres_url: str) -> None:
    pytest.importorskip("psycopg")
    with Memory.open(postgres_url, clock=FakeClock()) as mem:
        assert isinstance(mem, Memory)  # a database URL, not a server's
        preference = tell(mem, "pg-vegan")
        hits = mem.search(REQUEST, user_id="pg-vegan")
        assert any(preference in h.source_message_ids and h.explain.get("standing") for h in hits)
        for question in OFF_TOPIC:
            assert not mem.search(question, user_id="pg-vegan"), question
