"""What a pipeline stage does. L1: read the session's L0 after its cursor, window by window,
extract, dedup against the tenant's current atoms, and commit atoms + cursor together.

The cursor moves only inside ``AtomStore.commit``: an engine error leaves it where it was, and a
retry of the same window produces the same atom ids, so nothing is lost or stored twice.
"""

from __future__ import annotations

import logging
import time
from asyncio import to_thread
from dataclasses import dataclass, replace

from memstrata.layers.l0.sanitize import for_extraction
from memstrata.layers.l1 import gate
from memstrata.layers.l1.writer import Plan, plan_window, unique_drafts
from memstrata.models import Atom, AtomFilter, ExtractionWindow, Message, Tenant
from memstrata.pipeline.l1.commit import commit_atoms
from memstrata.ports import Clock, Deduplicator, Extractor, Store
from memstrata.retrieval.keyword import keyword_top
from memstrata.retrieval.terms import query_terms
from memstrata.retrieval.vectors import VectorState
from memstrata.settings import PipelineSettings

log = logging.getLogger(__name__)
DEDUP_CANDIDATES = 5


@dataclass(frozen=True, slots=True)
class L1Report:
    """What an L1 run committed: windows, messages read, atoms written, atoms superseded."""

    windows: int = 0
    messages: int = 0
    atoms: int = 0
    superseded: int = 0


@dataclass(slots=True)
class L1Progress:
    """What an L1 run has committed so far, updated after each window's commit. The caller keeps it
    when the run raises: the windows committed before the error stay committed (and their atoms
    still need L2)."""

    windows: int = 0
    messages: int = 0
    atoms: int = 0
    superseded: int = 0

    def report(self) -> L1Report:
        return L1Report(self.windows, self.messages, self.atoms, self.superseded)


class L1Runner:
    def __init__(
        self,
        store: Store,
        extractor: Extractor,
        deduplicator: Deduplicator,
        vectors: VectorState,
        clock: Clock,
        settings: PipelineSettings,
    ) -> None:
        self._store = store
        self._extractor = extractor
        self._dedup = deduplicator
        self._vectors = vectors
        self._clock = clock
        self._s = settings
        # When set (monotonic seconds), no window starts after it: a bounded shutdown drain.
        self.stop_at: float | None = None

    async def run(self, tenant: Tenant, session_key: str, progress: L1Progress | None = None) -> L1Report:
        """Drain the session's backlog window by window. Raises what the engine raises; windows
        committed before the error stay committed, and ``progress`` (if given) counts them."""
        done = progress if progress is not None else L1Progress()
        unembedded: list[Atom] = []
        try:
            return await self._drain(tenant, session_key, done, unembedded)
        finally:
            # One embedding batch for the whole run (much cheaper than one per window), written
            # even when a later window failed: those atoms are committed.
            await to_thread(self._vectors.embed_atoms, tenant, unembedded)

    async def _drain(
        self, tenant: Tenant, session_key: str, done: L1Progress, unembedded: list[Atom]
    ) -> L1Report:
        while self.stop_at is None or time.monotonic() < self.stop_at:
            state = await to_thread(self._store.pipeline.session, tenant, session_key)
            new = await to_thread(
                self._store.messages.after, tenant, session_key, state.cursor, self._s.window_size
            )
            if not new:
                break
            plan = await self._window(tenant, session_key, new)
            stored = await to_thread(
                commit_atoms, self._store, tenant, plan.new, plan.superseded, (session_key, new[-1].seq)
            )
            done.windows += 1
            done.messages += len(new)
            done.atoms += len(stored)
            done.superseded += len(plan.superseded)
            unembedded.extend(stored)
        return done.report()

    async def _window(self, tenant: Tenant, session_key: str, stored: list[Message]) -> Plan:
        new = [_prose(m) for m in stored]
        if not gate.passes(new):
            return Plan()
        background = await to_thread(
            self._store.messages.before, tenant, session_key, new[0].seq, self._s.background_size
        )
        window = ExtractionWindow(tenant, session_key, tuple(new), tuple(_prose(m) for m in background))
        drafts = unique_drafts(await self._extractor.extract(window))
        if not drafts:
            return Plan()
        candidates = await to_thread(lambda: [self._candidates(tenant, d.content) for d in drafts])
        decisions = await self._dedup.decide(drafts, candidates)
        return plan_window(tenant, session_key, new, drafts, decisions, candidates, self._clock.now_ms())

    def _candidates(self, tenant: Tenant, content: str) -> list[Atom]:
        # Expired atoms are no candidates: a draft saying the same again must not be skipped.
        flt = AtomFilter(at=self._clock.now_ms())
        found = keyword_top(self._store.index, tenant, flt, query_terms(content), DEDUP_CANDIDATES)
        return self._store.atoms.by_seq(tenant, [s.seq for s in found])


def _prose(m: Message) -> Message:
    """The message as extraction reads it: an assistant's code blocks are kept in L0 (searchable)
    but make no atoms (``for_extraction``)."""
    text = for_extraction(m.role, m.content)
    return m if text == m.content else replace(m, content=text)
