"""L0 in: capture a session's messages."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from memstrata import arguments as args
from memstrata.facade.core import FacadeCore
from memstrata.layers.l0.recorder import CaptureResult, MessageInput
from memstrata.models import (
    DEFAULT,
)


class CaptureMethods(FacadeCore):
    async def capture(
        self,
        messages: Sequence[MessageInput],
        *,
        session_key: str = DEFAULT,
        session_id: str | None = None,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> CaptureResult:
        """Store messages of one session (L0). Every message is checked first: one bad item is an
        ``InputError`` naming it, and nothing is stored. Returns at once: extraction runs in the
        pipeline."""
        self._writable("capture")
        tenant = args.tenant(user_id, agent_id)
        key = args.name(session_key, "session_key")
        sid = args.name(session_id, "session_id") if session_id is not None else key
        result = await asyncio.to_thread(self._recorder.record, tenant, key, sid, list(messages))
        self._pipeline.wake()
        return result
