"""L0 in: capture a session's messages."""

from __future__ import annotations

from memstrata import operations as ops
from memstrata.facade.core import FacadeCore, operation
from memstrata.layers.l0.recorder import CaptureResult
from memstrata.operations import arguments as args


class CaptureMethods(FacadeCore):
    @operation(ops.Capture)
    async def capture(self, op: ops.Capture) -> CaptureResult:
        given = args.messages(op.messages)
        return await self._capture(given, op.session_key, op.session_id, op.user_id, op.agent_id)
