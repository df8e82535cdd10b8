"""Import seed history (the TencentDB seed JSON formats, parsed by ``importers.seed``) through
capture, session by session, optionally running L1 on each session right away."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from memstrata import arguments as args
from memstrata.importers.types import ImportSession
from memstrata.layers.capture import CaptureResult
from memstrata.models import NewMessage, Role, Tenant

BATCH = 500  # messages per capture call

Capture = Callable[[Sequence[NewMessage], str, str, Tenant], Awaitable[CaptureResult]]
EndSession = Callable[[str, Tenant], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class SeedReport:
    """What an import did: sessions and messages read, stored, already stored, dropped as noise."""

    sessions: int
    messages: int
    rounds: int  # user messages
    stored: int
    duplicates: int
    dropped: int


async def import_sessions(
    sessions: Sequence[ImportSession],
    capture: Capture,
    end_session: EndSession | None,
    default: Tenant,
) -> SeedReport:
    """Capture every session (sessions without a tenant go to ``default``); with ``end_session``,
    run L1 on each session afterwards."""
    stored = duplicates = dropped = 0
    for i, s in enumerate(sessions):  # every tenant checked before anything is written
        args.tenant(s.tenant.user_id, s.tenant.agent_id, item=f"sessions[{i}].userId")
    for s in sessions:
        tenant = s.tenant if s.tenant != Tenant() else default
        for i in range(0, len(s.messages), BATCH):
            r = await capture(s.messages[i : i + BATCH], s.session_key, s.session_id, tenant)
            stored, duplicates, dropped = (
                stored + len(r.stored),
                duplicates + len(r.duplicates),
                dropped + len(r.dropped),
            )
        if end_session is not None:
            await end_session(s.session_key, tenant)
    messages = sum(len(s.messages) for s in sessions)
    rounds = sum(1 for s in sessions for m in s.messages if str(m.role) == Role.USER)
    return SeedReport(len(sessions), messages, rounds, stored, duplicates, dropped)
