"""The host turn lifecycle: ``before_prompt`` and ``turn_committed`` (logic in
``layers/host_turns.py``)."""

from __future__ import annotations

import asyncio
import functools
import re

from memstrata import operations as ops
from memstrata.errors import InputError
from memstrata.facade.core import FacadeCore, operation
from memstrata.layers import host_turns
from memstrata.layers.host_turns import PromptMark, PromptMarks, TurnResult
from memstrata.layers.l0.recorder import CaptureResult
from memstrata.models import (
    Tenant,
)
from memstrata.operations import arguments as args
from memstrata.recall import RecallResult


class TurnMethods(FacadeCore):
    @functools.cached_property
    def _marks(self) -> PromptMarks:
        t = self.settings.turns
        return PromptMarks(t.cache_sessions, int(t.cache_ttl_seconds * 1000))

    @functools.cached_property
    def _noise(self) -> tuple[re.Pattern[str], ...]:
        return host_turns.compile_patterns(self.settings.turns.noise_patterns)

    def _forgotten(self, tenant: Tenant) -> None:
        super()._forgotten(tenant)
        self._marks.drop(lambda key: isinstance(key, tuple) and key[0] == tenant)

    @operation(ops.BeforePrompt)
    async def before_prompt(self, op: ops.BeforePrompt) -> RecallResult:
        session_key, transcript_length, prompt = op.session_key, op.transcript_length, op.prompt
        user_id, agent_id = op.user_id, op.agent_id
        if transcript_length is not None and transcript_length < 0:
            raise InputError("must be 0 or more", item="transcript_length")
        tenant = args.tenant(user_id, agent_id)
        clean = host_turns.clean_prompt(prompt, self._noise)
        self._marks.put((tenant, session_key), PromptMark(clean, transcript_length, self._clock.now_ms()))
        return await self._recall(tenant, clean or prompt, tools=op.tools, memory_chars=op.memory_chars)

    @operation(ops.TurnCommitted)
    async def turn_committed(self, op: ops.TurnCommitted) -> TurnResult:
        session_key, user_id, agent_id = op.session_key, op.user_id, op.agent_id
        tenant = args.tenant(user_id, agent_id)
        transcript = [host_turns.as_turn_message(m, i) for i, m in enumerate(op.messages)]
        now = self._clock.now_ms()
        mark = self._marks.pop((tenant, session_key), now)
        if op.stored_before is not None:
            if op.stored_before > len(transcript):
                raise InputError("must be at most the number of messages", item="stored_before")
            # The mark's clean prompt still replaces the turn's prompt when it was taken at this
            # very position; a mark of another position is another turn's: dropped.
            same = mark is not None and mark.count == op.stored_before
            mark = PromptMark(mark.clean_text if same and mark else "", op.stored_before, now)
        # The session's last stored message is for the timestamp cursor: a host that says where
        # the new messages start (``stored_before``) needs none (one store read less).
        last = (
            None
            if op.stored_before is not None
            else await asyncio.to_thread(self._store.messages.last, tenant, session_key)
        )
        plan = host_turns.plan_commit(
            transcript,
            session_key=session_key,
            mark=mark,
            last_timestamp=last.timestamp if last is not None else None,
            extra=self._noise,
        )
        done = CaptureResult(())
        if plan.messages:
            done = await self._capture(plan.messages, session_key, op.session_id, user_id, agent_id)
        dropped = plan.dropped + done.dropped
        return TurnResult(
            done.stored, done.duplicates, dropped, plan.method, plan.replaced, done.degradations
        )
