"""What the proxy stores of a turn, through the facade's host-turn lifecycle.

Two commits a turn, neither in the way of the model call. The request's transcript (as the
client sent it: nothing injected is in it) goes to ``turn_committed`` from the turn's prompt on
(``stored_before``) while the upstream works on its answer, and the answer's last byte waits for
it, so the prompt is durable before the client has the answer (kept even when the upstream
fails or the client leaves). Once the client has the answer, the transcript and the answer's
messages go again with ``stored_before`` at the answer, which alone is new. A resent transcript
finds every earlier message stored already (stable ids, ``layers.host_turns``).

Auxiliary requests are left out entirely, neither recalled for nor stored: a request with no
user turn (a tool loop's continuation is not one: its prompt is the earlier user message), and
requests whose system prompt or prompt asks for a conversation title, a summary or compaction of
the conversation, or a topic check, Claude Code's quota probe (the patterns below, plus
``proxy.auxiliary_patterns``), and Codex requests whose ``x-codex-turn-metadata`` names a
``request_kind`` other than ``turn`` or a ``thread_source`` other than ``user``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any

from memstrata.errors import ConfigError
from memstrata.gateway.context import who
from memstrata.gateway.proxy.dialect import Turn
from memstrata.gateway.proxy.stats import ProxyStats
from memstrata.layers.host_turns import TurnMessage, TurnResult
from memstrata.models import Tenant
from memstrata.operations import MemoryApi

log = logging.getLogger("memstrata.proxy")
_SCAN = 4000  # characters of a system prompt or prompt searched for the patterns
AUXILIARY = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\btitle\b[^.\n]{0,80}\b(?:conversation|chat|thread|session)\b",
        r"\b(?:conversation|chat|thread)\b[^.\n]{0,40}\btitle\b",
        r"\bsummar(?:y|ize|ise)\b[^.\n]{0,60}\b(?:conversation|chat history|transcript)\b",
        r"\bcontext (?:checkpoint|compaction)\b|\bcompact(?:ing)? the conversation\b",
        r"\bnew conversation topic\b",
        r"\bgenerate\b[^.\n]{0,40}\btags\b[^.\n]{0,40}\bchat\b",
        r"\A\s*quota\s*\Z",  # Claude Code's quota probe (max_tokens 1, on an interactive start)
    )
)
CODEX_METADATA = "x-codex-turn-metadata"  # JSON: request_kind "turn", thread_source "user" for a turn


def patterns(extra: Sequence[str]) -> tuple[re.Pattern[str], ...]:
    """The built-in auxiliary patterns and the configured ones (a bad one is a ``ConfigError``)."""
    try:
        return AUXILIARY + tuple(re.compile(p, re.IGNORECASE) for p in extra)
    except re.error as exc:
        raise ConfigError(f"proxy.auxiliary_patterns: not a regular expression: {exc}") from exc


def auxiliary(
    turn: Turn, found: Sequence[re.Pattern[str]], headers: Mapping[str, str] | None = None
) -> str | None:
    """Why the request is auxiliary, or None when it is a turn of the conversation."""
    if turn.prompt_index is None:
        return "no user turn"
    codex = _codex_auxiliary((headers or {}).get(CODEX_METADATA))
    if codex is not None:
        return codex
    for where, text in (("system prompt", turn.system), ("prompt", turn.prompt)):
        head = text[:_SCAN]
        if any(p.search(head) for p in found):
            return f"{where} asks for a title, summary or topic check"
    return None


def _codex_auxiliary(metadata: str | None) -> str | None:
    """Why Codex's turn metadata marks a request as not the user's turn: a ``request_kind``
    other than ``turn`` (compaction and the like), or a ``thread_source`` other than ``user``
    (the TUI names each session by a thread of its own, ``thread_title``, whose prompt quotes
    the user's)."""
    if not metadata or len(metadata) > 10_000:
        return None
    try:
        found = json.loads(metadata)
    except ValueError:
        return None
    if not isinstance(found, dict):
        return None
    for key, usual in (("request_kind", "turn"), ("thread_source", "user")):
        value = found.get(key)
        if isinstance(value, str) and value != usual:
            return f"Codex {key} {value!r}"
    return None


async def commit(
    mem: MemoryApi,
    stats: ProxyStats,
    tenant: Tenant,
    session: str,
    messages: Sequence[TurnMessage],
    stored_before: int | None,
) -> TurnResult | None:
    """Store what is new in ``messages`` (those from position ``stored_before`` on): what was
    stored, or None when the store failed. Never raises (the model call goes on, or has been
    served): a failure is logged and counted."""
    try:
        result: TurnResult = await mem.turn_committed(
            list(messages), session_key=session, stored_before=stored_before, **who(tenant)
        )
    except Exception as exc:  # noqa: BLE001 - fail-open by design: counted in /v1/status, logged
        stats.capture_failures += 1
        log.warning("proxy: capture of session %s failed (%s: %s)", session, type(exc).__name__, exc)
        return None
    log.debug("proxy: session %s stored %d message(s) (%s)", session, len(result.stored), result.method)
    return result


def stored_role(result: TurnResult | None, role: str) -> bool:
    """Whether ``result`` stored a message of ``role`` (what the counters count: a message L0
    dropped, an answer that only echoed injected memory blocks say, was not stored)."""
    return result is not None and any(m.role == role for m in result.stored)


class Pending:
    """The prompt captures running beside their model calls. Each is its own task, so a client
    that leaves mid-answer cannot cancel it; ``drain`` lets the server's shutdown wait for them
    before the memory closes, so a prompt the upstream received is never lost."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[bool]] = set()

    def start(self, capture: Coroutine[Any, Any, bool]) -> asyncio.Task[bool]:
        task = asyncio.create_task(capture)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def drain(self, seconds: float) -> None:
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=seconds)
