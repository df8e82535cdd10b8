"""What the proxy injects, bounded and cache-friendly.

- The **system block** (persona and scene navigation from recall's ``system_context``; recall's
  memory-tools guide is left out, the proxied agent has no memory tools) goes at the end of the
  system prompt. It is kept per tenant and replaced only when the persona changes, so it is
  byte-identical between turns and the provider's prompt cache keeps hitting on everything
  before the latest turn. Scene heat reorders the navigation between recalls; that alone does
  not change the block.
- The **memories** (recall's block, assembled for ``proxy.memory_chars`` of their own:
  ``before_prompt``'s ``memory_chars``, which also has search consider proportionally fewer
  candidates than recall's larger default room) go before the text of the turn's prompt. Within
  one turn (an agent's tool loop resends the same prompt at the same position) they are reused,
  so the loop's requests stay byte-identical too and recall runs once.

Fail-open: recall that raises or is later than ``proxy.recall_timeout_ms`` costs the memories
of that request (a late one: of its turn) only (counted, logged); the system block already held
is still sent, and a late recall, when it ends, still refreshes it.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import re
from dataclasses import dataclass

from memstrata.gateway.context import who
from memstrata.gateway.proxy.dialect import Injection, Turn
from memstrata.gateway.proxy.stats import ProxyStats
from memstrata.lru import Lru
from memstrata.models import Tenant
from memstrata.operations import MemoryApi
from memstrata.recall import RecallResult
from memstrata.settings import Settings

log = logging.getLogger("memstrata.proxy")
_PERSONA = re.compile(r"<user-persona>\n(.*?)\n</user-persona>", re.DOTALL)
_GUIDE = re.compile(r"\n*<memory-tools-guide>.*?</memory-tools-guide>\n*", re.DOTALL)
CAPACITY = 10_000  # tenants, and turns, remembered (oldest forgotten first)


def persona_of(system_context: str) -> str:
    found = _PERSONA.search(system_context)
    return found.group(1) if found else ""


@dataclass(frozen=True, slots=True)
class _Held:
    persona: str
    block: str


class Injector:
    """Builds each request's ``Injection`` from the facade's ``before_prompt``."""

    def __init__(self, settings: Settings, stats: ProxyStats) -> None:
        self._settings = settings
        self._stats = stats
        self._systems: Lru[_Held] = Lru(CAPACITY)
        self._turns: Lru[Injection] = Lru(CAPACITY)

    async def injection(self, mem: MemoryApi, tenant: Tenant, session: str, turn: Turn) -> Injection:
        # The prompt's digest, not the prompt: 10,000 held turns of 200,000-character prompts
        # would otherwise keep about 2 GB alive.
        digest = hashlib.blake2b(turn.prompt.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        key = (tenant, session, turn.prompt_index, digest)
        cached = self._turns.get(key)
        if cached is not None:
            return cached
        held = self._systems.get(tenant)
        timeout = self._settings.proxy.recall_timeout_ms / 1000
        recall = asyncio.ensure_future(
            mem.before_prompt(
                turn.prompt,
                session_key=session,
                transcript_length=turn.prompt_index,
                memory_chars=self._settings.proxy.memory_chars,
                **who(tenant),
            )
        )
        done, _ = await asyncio.wait({recall}, timeout=timeout)
        if not done:
            # Not cancelled: its search thread runs on regardless, and its answer is still worth
            # keeping for the tenant's system block. This turn goes on without memories, and so
            # do its tool loop's next requests (kept below), so they stay byte-identical.
            self._stats.recall_timeouts += 1
            log.warning("proxy: recall not ready within %.0f ms: sent without memories", timeout * 1000)
            recall.add_done_callback(functools.partial(self._late, tenant))
            degraded = Injection(held.block if held else "")
            self._turns.put(key, degraded)
            return degraded
        if (exc := recall.exception()) is not None:
            self._stats.recall_failures += 1
            log.warning("proxy: recall failed (%s: %s): sent without memories", type(exc).__name__, exc)
            return Injection(held.block if held else "")
        result: RecallResult = recall.result()
        if result.degradations:
            self._stats.recall_degraded += 1
        injection = Injection(self._system(tenant, result, held), result.prepend_context)
        self._turns.put(key, injection)
        return injection

    def _late(self, tenant: Tenant, recall: asyncio.Future[RecallResult]) -> None:
        """A recall that came after its request left: the system block it read is kept for the
        tenant's next requests (a changed persona counts from then on)."""
        if recall.cancelled() or recall.exception() is not None:
            return
        self._system(tenant, recall.result(), self._systems.get(tenant))

    def _system(self, tenant: Tenant, result: RecallResult, held: _Held | None) -> str:
        persona = persona_of(result.system_context)
        partial = any(d.startswith(("persona", "scenes")) for d in result.degradations)
        if held is not None and (held.persona == persona or partial):
            return held.block  # unchanged persona (or one recall could not read): same bytes
        block = _GUIDE.sub("", result.system_context).strip()
        self._systems.put(tenant, _Held(persona, block))
        return block
