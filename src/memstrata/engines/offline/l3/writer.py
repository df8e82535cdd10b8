"""``OfflinePersonaWriter``: the ``PersonaWriter`` of the offline engine. Deterministic, no network.

The body names the people the memories are about and, for each, gives a short paragraph of their
most important facts, then lists of further facts and preferences; then the instructions for the
assistant and the main topics (the scenes, hottest first). It is rebuilt from the request each
time, so first and incremental mode give the same result for the same memories.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from memstrata.engines.offline import atom_text as st
from memstrata.engines.offline.l2.render import title_of
from memstrata.models import Atom, AtomType
from memstrata.ports import PersonaRequest, Scene

MAX_PEOPLE = 3
LEAD_FACTS = 3
MORE_FACTS = 8
PREFERENCES = 6
EVENTS = 6
INSTRUCTIONS = 12
TOPICS = 8


class OfflinePersonaWriter:
    """``PersonaWriter`` that writes the persona from the request's atoms and scenes."""

    async def write(self, request: PersonaRequest) -> str:
        """The persona body (Markdown)."""
        return await asyncio.to_thread(render, request)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?…" else f"{text}."


def _distinct(atoms: Sequence[Atom]) -> list[Atom]:
    seen: set[str] = set()
    out = []
    for a in atoms:
        key = st.fold(st.statement(a))
        if key and key not in seen:
            seen.add(key)
            out.append(a)
    return out


def render(request: PersonaRequest) -> str:
    """The persona body for ``request`` (atoms arrive highest priority first)."""
    facts = _distinct([a for a in request.atoms if a.type == AtomType.PERSONA and not st.is_quoted(a)])
    rules = _distinct([a for a in request.atoms if a.type == AtomType.INSTRUCTION])
    people = st.people(request.atoms, MAX_PEOPLE)
    lines = ["# Persona", "", _lead(people, request.scenes)]
    events = _distinct([a for a in request.events if not st.is_quoted(a)])
    grouped: dict[str | None, tuple[list[Atom], list[Atom]]] = {}
    for a in facts:
        grouped.setdefault(st.subject(a, people), ([], []))[0].append(a)
    for a in events:
        grouped.setdefault(st.subject(a, people), ([], []))[1].append(a)
    for person in [*people, None]:
        mine, happened = grouped.get(person, ([], []))
        if mine or happened:
            lines += ["", *_person(person, mine, happened, named=bool(people))]
    if rules:
        lines += ["", "## Instructions for the assistant", ""]
        lines += [
            f"- {st.statement(a)}{' (always)' if a.priority == -1 else ''}" for a in rules[:INSTRUCTIONS]
        ]
    if request.scenes:
        lines += ["", "## Main topics", ""]
        lines += [f"- **{title_of(s.name)}**: {s.summary}" for s in request.scenes[:TOPICS]]
    return "\n".join(lines) + "\n"


def _lead(people: Sequence[str], scenes: Sequence[Scene]) -> str:
    who = st.join_names(people) if people else "the user"
    text = f"These memories are about {who}."
    topics = [title_of(s.name).lower() for s in scenes[:3]]
    if topics:
        text += f" The conversations return most often to {st.join_names(topics)}."
    return text


def _person(person: str | None, facts: list[Atom], events: list[Atom], *, named: bool) -> list[str]:
    heading = person or ("Others" if named else "About the user")
    prefs = [a for a in facts if st.is_preference(a)][:PREFERENCES]
    plain = [a for a in facts if not st.is_preference(a)]
    lead, more = plain[:LEAD_FACTS], plain[LEAD_FACTS : LEAD_FACTS + MORE_FACTS]
    lines = [f"## {heading}"]
    if lead:
        lines += ["", " ".join(_sentence(st.statement(a)) for a in lead)]
    if more:
        lines += ["", "Key facts:", "", *(f"- {st.statement(a)}" for a in more)]
    if prefs:
        lines += ["", "Likes and preferences:", "", *(f"- {st.statement(a)}" for a in prefs)]
    if events:
        dated = sorted(events[:EVENTS], key=lambda a: (st.when(a)[0], a.seq))
        lines += ["", "Notable events:", "", *(f"- **{st.when(a)[1]}** {st.statement(a)}" for a in dated)]
    return lines
