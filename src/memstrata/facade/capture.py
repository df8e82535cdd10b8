"""L0 in: capture a session's messages."""

from __future__ import annotations

import asyncio
import functools

from memstrata import arguments as args
from memstrata import operations as ops
from memstrata.facade.core import FacadeCore, operation
from memstrata.layers.l0.recorder import CaptureResult


class CaptureMethods(FacadeCore):
    @operation(ops.Capture)
    async def capture(self, op: ops.Capture) -> CaptureResult:
        self._writable("capture")
        tenant = args.tenant(op.user_id, op.agent_id)
        key = args.name(op.session_key, "session_key")
        sid = args.name(op.session_id, "session_id") if op.session_id is not None else key
        # With a background pipeline the capture's caller (an agent's turn) does not wait for the
        # model: the woken loop embeds this batch with whatever else arrived, in one larger batch.
        embed = self._background is None
        result = await asyncio.to_thread(
            functools.partial(self._recorder.record, tenant, key, sid, list(op.messages), embed=embed)
        )
        if not embed and result.stored:
            self._pipeline.embedding.gather(self._clock.now_ms())
        self._pipeline.wake()
        return result
