"""Imports extract tenants side by side but each tenant's sessions in their order."""

from __future__ import annotations

from memstrata import AsyncMemory
from memstrata.interchange.sessions import ImportSession
from memstrata.models import NewMessage, Tenant
from tests.support.engines import RecordingExtractor


def _session(user: str, key: str, day: int) -> ImportSession:
    base = 1_700_000_000_000 + day * 86_400_000
    messages = tuple(
        NewMessage("user", f"{user} {key} message {i}: planning the trip to Lisbon", timestamp=base + i)
        for i in range(3)
    )
    return ImportSession(Tenant(user, "agent"), key, key, messages)


async def test_each_tenants_sessions_are_extracted_in_order(
    recording_memory: AsyncMemory, extractor: RecordingExtractor
) -> None:
    sessions = [_session(user, f"s{n}", n) for n in range(1, 5) for user in ("ann", "bob", "cy")]

    report = await recording_memory.import_sessions(sessions)

    assert report.stored == 3 * 4 * 3
    seen: dict[str, list[str]] = {}
    for window in extractor.windows:
        seen.setdefault(window.tenant.user_id, []).append(window.session_key)
    assert seen == {user: ["s1", "s2", "s3", "s4"] for user in ("ann", "bob", "cy")}
