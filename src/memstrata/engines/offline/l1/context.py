"""Who is speaking, to whom, and when: the per-message context the extractor works with."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime

from memstrata.errors import EngineError
from memstrata.models import Message, Role

# A participant without a name is who they are to the agent: "the user" (one person, whatever
# their messages' roles), "the assistant". Never a name made from the role ("User live in Porto").
USER = "the user"
ASSISTANT = "the assistant"
ROLE_LABELS = frozenset({USER, ASSISTANT, "User", "Assistant"})  # with the labels of older atoms


@dataclass(frozen=True, slots=True)
class Speech:
    """One message with its speaker's label, the listener's label and the day it was said."""

    message: Message
    me: str
    other: str
    to_assistant: bool  # the listener is the assistant (instructions are only taken then)
    day: date
    names: frozenset[str]  # lowercased names of the window's participants


def speaker_label(m: Message) -> str:
    """The speaker's name, else ``the user`` / ``the assistant`` by role."""
    if m.name and m.name.strip():
        return m.name.strip()
    return USER if m.role == Role.USER else ASSISTANT


def message_day(m: Message) -> date:
    """The UTC calendar day of the message's timestamp (ms). Raises ``EngineError`` when the
    timestamp is not a representable time (relative dates could not be resolved against it)."""
    try:
        return datetime.fromtimestamp(m.timestamp / 1000, UTC).date()
    except (OverflowError, OSError, ValueError) as exc:
        raise EngineError(f"message {m.id!r} has an unusable timestamp {m.timestamp!r}") from exc


def _listener(context: Sequence[Message], i: int) -> Message | None:
    """The most recent earlier message by someone else; failing that, the next one by someone else."""
    me = speaker_label(context[i])
    for j in range(i - 1, -1, -1):
        if speaker_label(context[j]) != me:
            return context[j]
    for j in range(i + 1, len(context)):
        if speaker_label(context[j]) != me:
            return context[j]
    return None


def speech(context: Sequence[Message], i: int, names: frozenset[str]) -> Speech:
    """The context of ``context[i]``: "you" is the other participant (a user talking to nobody in
    particular talks to the assistant; the assistant talks to the user)."""
    m = context[i]
    listener = _listener(context, i)
    if listener is not None:
        other = speaker_label(listener)
        to_assistant = listener.role == Role.ASSISTANT
    else:
        other = ASSISTANT if m.role == Role.USER else USER
        to_assistant = m.role == Role.USER
    return Speech(m, speaker_label(m), other, to_assistant, message_day(m), names)


def participant_names(context: Sequence[Message]) -> frozenset[str]:
    """Lowercased speaker names of a window and each of their parts ("Ann Lee" -> ann, lee)."""
    out: set[str] = set()
    for m in context:
        if m.name:
            out.update(m.name.lower().split())
    return frozenset(out)


# A nameless user giving their name: "my name is Ana", "call me Sam", "Hi, I'm Craig, ...".
# "I'm <Word>" only where a message opens (later, "I'm Canadian" is no name).
_GIVES_NAME = re.compile(
    r"\b(?:my name is|my name's|(?i:call me))\s+(?P<name>[A-Z][a-z]+)\b|"
    r"^(?:(?:hi|hello|hey)[,!.]?\s+)?(?:i'm|i am)\s+(?P<lead>[A-Z][a-z]+)(?=\s*[,.!;-]|\s+and\b)",
    re.IGNORECASE,
)


def introduced_name(m: Message) -> str | None:
    """The name a nameless user's message gives for its speaker, if any."""
    if m.role != Role.USER or (m.name and m.name.strip()):
        return None
    found = _GIVES_NAME.search(m.content.strip())
    if found is None:
        return None
    name = found.group("name") or found.group("lead")
    return name if name[:1].isupper() else None
