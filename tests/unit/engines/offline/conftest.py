"""Helpers for the offline-engine tests: messages and windows built from plain tuples."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import pytest

from memstrata.models import ExtractionWindow, Message, Role, Tenant

# Monday 8 May 2023, 13:56 UTC
MONDAY_MS = int(datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp() * 1000)

Turn = tuple[str | None, str] | tuple[str | None, str, str]  # (name, text) or (name, text, role)
WindowFactory = Callable[..., ExtractionWindow]


def make_messages(turns: Sequence[Turn], *, start_ms: int = MONDAY_MS, prefix: str = "m") -> list[Message]:
    out = []
    for i, turn in enumerate(turns):
        name, text = turn[0], turn[1]
        role = Role(turn[2]) if len(turn) == 3 else Role.USER
        out.append(
            Message(
                id=f"{prefix}{i + 1}",
                tenant=Tenant(),
                session_key="s",
                session_id="s1",
                role=role,
                content=text,
                timestamp=start_ms + 10_000 * i,
                recorded_at=start_ms + 10_000 * i,
                name=name,
            )
        )
    return out


@pytest.fixture
def messages() -> Callable[..., list[Message]]:
    """``messages(turns, start_ms=...)``: turns as messages m1, m2, ... ten seconds apart."""
    return make_messages


@pytest.fixture
def monday_ms() -> int:
    """The first message's timestamp: Monday 8 May 2023, 13:56 UTC."""
    return MONDAY_MS


@pytest.fixture
def window() -> WindowFactory:
    """``window(turns, background=n)``: the first ``n`` turns become background, the rest new."""

    def build(turns: Sequence[Turn], background: int = 0, start_ms: int = MONDAY_MS) -> ExtractionWindow:
        msgs = make_messages(turns, start_ms=start_ms)
        return ExtractionWindow(Tenant(), "s", tuple(msgs[background:]), tuple(msgs[:background]))

    return build
