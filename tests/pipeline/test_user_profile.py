"""The user as the agent sees them: a nameless user is one person in the persona, and a preference
stated once reaches recall for a later request that shares no word with it."""

from __future__ import annotations

import pytest

from memstrata import Memory
from memstrata.pipeline.upper import l3_runner

T0 = 1_780_000_000_000
MINUTE = 60_000
# Standing facts enough to fill the persona's share many times over.
FACTS = [
    "I work as a nurse at the children's hospital.",
    "I live in Porto near the river.",
    "My sister Joana lives in Lyon with her two kids.",
    "My husband Rui works as a chef at a seafood place.",
    "I grew up in Braga in a big family.",
    "I'm allergic to penicillin.",
    "My daughter Ines studies architecture at the university.",
    "My brother Tiago works at a bank in Lisbon.",
    "I have two dogs called Bolt and Nina.",
    "My mother lives with us since her surgery.",
    "I'm from the north of Portugal, near the Spanish border.",
    "My son Pedro plays football for the school team.",
    "I moved to the coast for my husband's job.",
    "My best friend Carla works as a teacher in Aveiro.",
    "I have a brother-in-law who works as a pilot.",
    "My neighbours are a retired couple from Germany.",
]


def _say(mem: Memory, user: str, key: str, turns: list[tuple[str, str, str | None]]) -> None:
    messages = [
        {
            "role": role,
            "content": text,
            "id": f"{key}-{i}",
            "timestamp": T0 + i * MINUTE,
            **({"name": n} if n else {}),
        }
        for i, (role, text, n) in enumerate(turns)
    ]
    mem.capture(messages, session_key=key, user_id=user)


def test_a_preference_stated_once_reaches_recall_for_a_request_without_its_words(
    empty_memory: Memory,
) -> None:
    turns: list[tuple[str, str, str | None]] = [("user", fact, None) for fact in FACTS]
    turns.insert(7, ("user", "I prefer aisle seats on long flights.", None))
    turns.insert(8, ("assistant", "Understood, I'll keep that in mind.", None))
    _say(empty_memory, "ana", "s1", turns)
    empty_memory.run_all()
    persona = empty_memory.persona(user_id="ana")
    assert persona is not None and "The user prefers aisle seats on long flights" in persona.body
    context = empty_memory.recall("Book me something to Tokyo next month.", user_id="ana")
    assert "aisle seats" in context.system_context  # the persona carries it: no shared word needed


def test_a_user_named_once_is_one_person_in_the_persona(empty_memory: Memory) -> None:
    _say(
        empty_memory,
        "maya",
        "a",
        [("user", "I work as a nurse at the clinic.", "Maya"), ("assistant", "Noted.", None)],
    )
    _say(
        empty_memory,
        "maya",
        "b",
        [("user", "I prefer window seats.", None), ("user", "My sister lives in Lyon.", None)],
    )
    empty_memory.run_all()
    persona = empty_memory.persona(user_id="maya")
    assert persona is not None
    body = persona.body.split("<!--")[0]
    assert "## Maya" in body and "Others" not in body and "user" not in body.lower()
    assert "Maya prefers window seats" in body and "Maya's sister lives in Lyon" in body


def test_a_nameless_user_who_gives_a_name_is_called_by_it(empty_memory: Memory) -> None:
    _say(
        empty_memory,
        "ana",
        "s",
        [
            ("user", "Hi! My name is Ana and I live in Porto.", None),
            ("assistant", "Nice to meet you, Ana!", None),
            ("user", "I have a cat called Miso.", None),
        ],
    )
    empty_memory.run_all()
    persona = empty_memory.persona(user_id="ana")
    assert persona is not None
    body = persona.body.split("<!--")[0]
    assert "## Ana" in body and "Ana lives in Porto" in body and "Ana has a cat called Miso" in body
    assert "User" not in body and "name is Ana" not in body


def test_a_name_given_in_a_request_still_names_the_user(empty_memory: Memory) -> None:
    # The naming message is a request and leaves no memory of its own: the name must survive it.
    _say(
        empty_memory,
        "dolores",
        "s",
        [
            ("user", "I'm Dolores, a bakery owner, and I'm pricing my sourdough - can you help?", None),
            ("assistant", "Of course, Dolores! Let's start with your costs.", None),
            ("user", "I live in Tucson with my brother.", None),
            ("user", "I use rye flour from a local mill.", None),
        ],
    )
    empty_memory.run_all()
    persona = empty_memory.persona(user_id="dolores")
    assert persona is not None
    body = persona.body.split("<!--")[0]
    assert "## Dolores" in body and "Dolores lives in Tucson" in body and "User" not in body


def test_the_given_name_reaches_the_persona_past_the_writers_cut(
    empty_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The persona writer sees the top atoms only: the one carrying the name ranks below the cut.
    monkeypatch.setattr(l3_runner, "TOP_ATOMS", 2)
    monkeypatch.setattr(l3_runner, "TOP_EVENTS", 1)
    named = "I'm Dolores, a bakery owner, and I'm pricing my sourdough - can you help?"
    _say(empty_memory, "dolores", "a", [("user", named, None), ("user", "I bake with rye flour.", None)])
    later = ["I live in Tucson with my brother.", "I work as a baker downtown.", "I have a cat called Pip."]
    _say(empty_memory, "dolores", "b", [("user", fact, None) for fact in later])
    empty_memory.run_all()
    persona = empty_memory.persona(user_id="dolores")
    assert persona is not None
    body = persona.body.split("<!--")[0]
    assert "## Dolores" in body and "User" not in body


def test_a_callers_user_name_metadata_does_not_rename_the_user(empty_memory: Memory) -> None:
    """``user_name`` is the engine's key: a caller's message metadata of that name stays on the
    message and is not carried onto atoms, so it never decides who the persona is about."""
    empty_memory.capture(
        [
            {"role": "user", "content": "I have a cat called Miso.", "metadata": {"user_name": "Zed"}},
            {"role": "user", "content": "I live in Porto.", "metadata": {"user_name": "Zed", "app": "crm"}},
        ],
        session_key="s",
        user_id="ana",
    )
    empty_memory.run_all()
    atoms = empty_memory.atoms(user_id="ana")
    assert atoms and all("user_name" not in a.metadata for a in atoms)
    assert any(a.metadata.get("app") == "crm" for a in atoms)  # the caller's other keys still carry
    persona = empty_memory.persona(user_id="ana")
    assert persona is not None and "Zed" not in persona.body
