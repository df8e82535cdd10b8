"""The SSE tap: reads server-sent events out of a stream's bytes as they pass, without holding
the stream back.

The proxy forwards every chunk to the client the moment it arrives and hands a copy to a
``SseTap``, which splits it into events (a chunk may end mid-line or mid-event; the rest waits
for the next chunk). Only what the capture needs is kept: the events themselves are handed to
the dialect and dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

MAX_PENDING = 4 * 1024 * 1024  # an event larger than this is not parsed (it still passes through)


@dataclass(frozen=True, slots=True)
class Event:
    """One server-sent event: its ``event:`` name (empty when none) and its ``data:`` lines."""

    name: str
    data: str

    def json(self) -> Any:
        """The data as JSON, or None when it is not (``[DONE]``, a comment)."""
        try:
            return json.loads(self.data)
        except ValueError:
            return None


class SseTap:
    """Splits a byte stream into ``Event`` s, chunk by chunk."""

    def __init__(self) -> None:
        self._pending = b""
        self.overflowed = False  # an event too large to parse went by

    def feed(self, chunk: bytes) -> Iterator[Event]:
        """The events ``chunk`` completes."""
        buf = (self._pending + chunk).replace(b"\r\n", b"\n")
        *complete, self._pending = buf.split(b"\n\n")
        if len(self._pending) > MAX_PENDING:
            self._pending, self.overflowed = b"", True
        for raw in complete:
            event = parse(raw.decode("utf-8", "replace"))
            if event is not None:
                yield event

    def close(self) -> Iterator[Event]:
        """The last event, when the stream ended without a blank line after it."""
        rest, self._pending = self._pending, b""
        event = parse(rest.decode("utf-8", "replace")) if rest.strip() else None
        if event is not None:
            yield event


# The event each API ends a complete answer with: OpenAI Chat Completions' ``[DONE]``, Anthropic's
# ``message_stop``, the Responses API's ``response.completed`` (or its failed / incomplete end).
_FINAL_TYPES = frozenset({"message_stop", "response.completed", "response.failed", "response.incomplete"})


def is_final(event: Event) -> bool:
    """Whether ``event`` ends the answer: SDKs stop reading there, and may close the connection
    before the upstream has ended its response."""
    if event.data.strip() == "[DONE]" or event.name in _FINAL_TYPES:
        return True
    # An event without a name: parsed only when it may be one (the dialect parses every event).
    if not any(t in event.data for t in _FINAL_TYPES):
        return False
    found = event.json()
    return isinstance(found, dict) and found.get("type") in _FINAL_TYPES


def parse(block: str) -> Event | None:
    """One event block (its lines without the blank line ending it); None for comments only."""
    name, data = "", []
    for line in block.split("\n"):
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    if not name and not data:
        return None
    return Event(name, "\n".join(data))
