"""What a pipeline stage does. L1: read the session's L0 after its cursor, window by window,
extract, dedup against the tenant's current atoms, and commit atoms + cursor together.

The cursor moves only inside ``AtomStore.commit``: an engine error leaves it where it was, and a
retry of the same window produces the same atom ids, so nothing is lost or stored twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from memstrata.errors import EmbeddingError
from memstrata.layers.l1 import gate
from memstrata.layers.l1.writer import Plan, plan_window, unique_drafts
from memstrata.models import Atom, Layer, Message, Tenant
from memstrata.ports import (
    AtomFilter,
    Clock,
    Deduplicator,
    Embedder,
    ExtractionWindow,
    Extractor,
    Store,
)
from memstrata.retrieval.documents import atom_body
from memstrata.retrieval.terms import query_terms
from memstrata.settings import PipelineSettings

log = logging.getLogger(__name__)
DEDUP_CANDIDATES = 5


@dataclass(frozen=True, slots=True)
class L1Report:
    windows: int = 0
    messages: int = 0
    atoms: int = 0
    superseded: int = 0


class L1Runner:
    def __init__(
        self,
        store: Store,
        extractor: Extractor,
        deduplicator: Deduplicator,
        embedder: Callable[[], Embedder | None],
        clock: Clock,
        settings: PipelineSettings,
    ) -> None:
        self._store = store
        self._extractor = extractor
        self._dedup = deduplicator
        self._embedder = embedder
        self._clock = clock
        self._s = settings

    async def run(self, tenant: Tenant, session_key: str) -> L1Report:
        """Drain the session's backlog window by window. Raises what the engine raises; windows
        committed before the error stay committed."""
        windows = messages = atoms = superseded = 0
        while True:
            state = await asyncio.to_thread(self._store.pipeline.session, tenant, session_key)
            new = await asyncio.to_thread(
                self._store.messages.after, tenant, session_key, state.cursor, self._s.window_size
            )
            if not new:
                break
            plan = await self._window(tenant, session_key, new)
            await asyncio.to_thread(self._commit, tenant, session_key, new, plan)
            windows += 1
            messages += len(new)
            atoms += len(plan.new)
            superseded += len(plan.superseded)
        return L1Report(windows, messages, atoms, superseded)

    async def _window(self, tenant: Tenant, session_key: str, new: list[Message]) -> Plan:
        if not gate.passes(new):
            return Plan()
        background = await asyncio.to_thread(
            self._store.messages.before, tenant, session_key, new[0].seq, self._s.background_size
        )
        window = ExtractionWindow(tenant, session_key, tuple(new), tuple(background))
        drafts = unique_drafts(await self._extractor.extract(window))
        if not drafts:
            return Plan()
        candidates = await asyncio.to_thread(lambda: [self._candidates(tenant, d.content) for d in drafts])
        decisions = await self._dedup.decide(drafts, candidates)
        return plan_window(tenant, session_key, new, drafts, decisions, candidates, self._clock.now_ms())

    def _candidates(self, tenant: Tenant, content: str) -> list[Atom]:
        found = self._store.index.keyword(
            tenant, Layer.L1, query_terms(content), DEDUP_CANDIDATES, AtomFilter()
        )
        return self._store.atoms.by_seq(tenant, [s.seq for s in found])

    def _commit(self, tenant: Tenant, session_key: str, new: list[Message], plan: Plan) -> None:
        items = [(a, atom_body(a)) for a in plan.new]
        stored = self._store.atoms.commit(tenant, items, plan.superseded, (session_key, new[-1].seq))
        embedder = self._embedder()
        if embedder is None or not stored:
            return
        try:
            vectors = embedder.embed([atom_body(a) for a in stored])
        except EmbeddingError as exc:
            # The atoms are committed; only their vectors wait for `memstrata reindex`.
            log.warning("atom embedding failed (run `memstrata reindex`): %s", exc)
            return
        self._store.index.put_vectors(tenant, Layer.L1, [a.seq for a in stored], vectors)
