"""``OfflinePersonaWriter``: the ``PersonaWriter`` of the offline engine. Deterministic, no network.

The persona is a profile, not a log: per person, the standing facts (health, work and education,
home, family and relationships, pets, identity, likes, plans), the most salient first, without
repeats, each short and dated (the month it was said); then the instructions for the assistant.
Events live in the scenes. The body stays within ``max_chars`` (people share it by how much their
memories say; instructions first, since the assistant must follow them). It is rebuilt from the
request each time, so first and incremental mode give the same result for the same memories.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

from memstrata.engines.offline import atom_text as st
from memstrata.engines.offline import user
from memstrata.engines.offline.l3.facts import (
    LIKES,
    OTHER,
    PREFERENCES,
    SECTIONS,
    Fact,
    candidates,
    dated,
    distinct,
)
from memstrata.engines.offline.lang.en import named
from memstrata.engines.offline.packs import pack_of_atoms
from memstrata.models import Atom, AtomType
from memstrata.ports import PersonaRequest

MAX_PEOPLE = 3
MAX_CHARS = 800
INSTRUCTIONS_SHARE = 0.3  # of the body, at most, for the instructions
# Of a person's room, at most, for their stated preferences: 1.0 (no cap) chosen in 111 of 111
# leave-one-conversation-out folds on what recall injects (bench/constants_loo.py).
PREFERENCES_SHARE = 1.0
ORDER = [PREFERENCES] + [name for name, _ in SECTIONS if name != "Plans"] + [LIKES, "Plans", OTHER]


class OfflinePersonaWriter:
    """``PersonaWriter`` that writes the persona profile from the request's atoms."""

    def __init__(self, max_chars: int = MAX_CHARS) -> None:
        self.max_chars = max_chars

    async def write(self, request: PersonaRequest) -> str:
        """The persona body (Markdown)."""
        return await asyncio.to_thread(render, request, self.max_chars)


def render(request: PersonaRequest, max_chars: int = MAX_CHARS) -> str:
    """The persona body for ``request`` within ``max_chars`` (atoms arrive highest priority first),
    in the language most of its memories are in."""
    written = pack_of_atoms(request.atoms).persona(request, max_chars, INSTRUCTIONS_SHARE)
    if written is not None:
        return written
    people = st.people(request.atoms, MAX_PEOPLE) or st.people(request.events, MAX_PEOPLE)
    alias = user.user_name([*request.atoms, *request.events], people)
    if alias is not None and not people:
        people = [alias]
    who = st.join_names(people) or "the user"
    lines = ["# Persona", "", f"What these memories say about {who}, most telling first."]
    rules = _instructions(request.atoms, int(max_chars * INSTRUCTIONS_SHARE), alias)
    room = max_chars - sum(len(x) + 1 for x in lines) - sum(len(x) + 1 for x in rules)
    skip = frozenset(p.lower() for p in people)
    today = datetime.fromtimestamp(request.now / 1000, UTC).date()
    facts = distinct(candidates(request.atoms, request.events, skip, today))
    grouped: dict[str | None, list[Fact]] = {}
    for f in facts:
        if alias is not None and user.about_nameless_user(f.atom):
            if said := named(f.text, alias):
                grouped.setdefault(alias, []).append(replace(f, text=said))
        else:
            grouped.setdefault(st.subject(f.atom, people), []).append(f)
    heads = [*people, None] if people else [None]
    shares = _shares({p: len(grouped.get(p, [])) for p in heads}, room)
    for person in heads:
        mine = grouped.get(person, [])
        if mine and shares[person] > 0:
            lines += ["", *_person(person, mine, shares[person], named=bool(people))]
    return "\n".join([*lines, *rules]) + "\n"


def _shares(counts: dict[str | None, int], room: int) -> dict[str | None, int]:
    """Characters per person, by how many facts each has (the unnamed rest gets at most a sixth)."""
    total = sum(counts.values()) or 1
    out = {p: int(room * n / total) for p, n in counts.items()}
    if None in out and len(counts) > 1:
        spare = max(0, out[None] - room // 6)
        out[None] -= spare
        named = [p for p in counts if p is not None]
        for p in named:
            out[p] += spare // len(named)
    return out


def _person(person: str | None, facts: Sequence[Fact], room: int, *, named: bool) -> list[str]:
    """``## <person>`` and one bullet per section, facts joined by "; ", best facts until ``room``."""
    heading = f"## {person or ('Others' if named else 'About the user')}"
    used = len(heading) + 2
    chosen: dict[str, list[str]] = {}
    # Stated preferences first (up to PREFERENCES_SHARE of the room), then the rest best first: a
    # preference said once must reach the agent for a later request that does not mention it
    # (PrefEval), and it is no log entry; the cap keeps room for who the person is.
    for f in sorted(facts, key=lambda f: f.section != PREFERENCES):
        text = dated(f)
        cost = len(text) + (2 if f.section in chosen else len(f.section) + 6)
        first = f.section == PREFERENCES and used + cost <= room * PREFERENCES_SHARE
        if used + cost > room or (f.section == PREFERENCES and not first):
            continue
        chosen.setdefault(f.section, []).append(text)
        used += cost
    lines = [heading, ""]
    lines += [f"- {name}: {'; '.join(chosen[name])}." for name in ORDER if name in chosen]
    return lines if len(lines) > 2 else []


def _instructions(atoms: Sequence[Atom], room: int, alias: str | None) -> list[str]:
    """The instructions for the assistant, strict ones first, within ``room`` ("the user" read as
    ``alias`` when the user has a name)."""
    seen: set[str] = set()
    lines: list[str] = []
    used = 0
    for a in atoms:
        if a.type != AtomType.INSTRUCTION:
            continue
        key = st.fold(st.statement(a))
        line = f"- {user.statement_as(a, alias)}{' (always)' if a.priority == -1 else ''}"
        if key in seen or used + len(line) + 1 > room:
            continue
        seen.add(key)
        lines.append(line)
        used += len(line) + 1
    return ["", "## Instructions for the assistant", "", *lines] if lines else []
