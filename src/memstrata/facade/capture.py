"""L0 in: capture a session's messages."""

from __future__ import annotations

import asyncio
import functools
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
        ``InputError`` naming it, and nothing is stored. Returns once stored: extraction runs in the
        pipeline, and so do the messages' vectors when the pipeline runs in the background (a
        server), else they are made before returning."""
        self._writable("capture")
        tenant = args.tenant(user_id, agent_id)
        key = args.name(session_key, "session_key")
        sid = args.name(session_id, "session_id") if session_id is not None else key
        # With a background pipeline the capture's caller (an agent's turn) does not wait for the
        # model: the woken loop embeds this batch with whatever else arrived, in one larger batch.
        embed = self._background is None
        result = await asyncio.to_thread(
            functools.partial(self._recorder.record, tenant, key, sid, list(messages), embed=embed)
        )
        if not embed and result.stored:
            self._pipeline.embedding.gather(self._clock.now_ms())
        self._pipeline.wake()
        return result
