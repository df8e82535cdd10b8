"""Search across layers, and recall before a prompt."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Iterable

from memstrata import arguments as args
from memstrata.facade.core import FacadeCore
from memstrata.models import (
    DEFAULT,
    DEFAULT_LAYERS,
    AtomFilter,
    Layer,
    MessageFilter,
    SearchResult,
    Tenant,
)
from memstrata.recall import Budgets, RecallResult, gather, heated, recall_sources
from memstrata.retrieval.search import SearchRequest

log = logging.getLogger(__name__)


class SearchMethods(FacadeCore):
    async def search(
        self,
        query: str,
        *,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
        limit: int = 10,
        layers: Iterable[str | Layer] = DEFAULT_LAYERS,
        mode: str = "hybrid",
        min_score: float | None = None,
        type: str | None = None,
        scene: str | None = None,
        session_key: str | None = None,
        since: int | None = None,
        until: int | None = None,
        include_superseded: bool = False,
    ) -> SearchResult:
        """Search memory atoms (L1) and/or raw messages (L0) of one tenant, best first by relevance
        (``Hit.score`` in [0, 1]); hits below ``min_score`` (default ``search.min_score``) are left
        out, so a query about nothing stored finds nothing."""
        req = SearchRequest(
            args.tenant(user_id, agent_id),
            args.query(query),
            tuple(args.layer(x) for x in layers),
            args.limit(limit),
            MessageFilter(session_key, since, until),
            AtomFilter(args.atom_type(type), scene, since, until, include_superseded),
            args.plan(mode, self.settings),
            args.min_score(min_score, self.settings),
        )
        return await asyncio.to_thread(self._searcher.search, req)

    async def search_conversations(
        self,
        query: str,
        *,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
        limit: int = 10,
        session_key: str | None = None,
        mode: str = "hybrid",
        since: int | None = None,
        until: int | None = None,
        min_score: float | None = None,
    ) -> SearchResult:
        """Search raw messages (L0) only."""
        return await self.search(
            query,
            user_id=user_id,
            agent_id=agent_id,
            limit=limit,
            layers=("L0",),
            mode=mode,
            session_key=session_key,
            since=since,
            until=until,
            min_score=min_score,
        )

    async def recall(
        self,
        query: str,
        *,
        session_key: str | None = None,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> RecallResult:
        """Context for the next prompt: ``system_context`` (persona, scene navigation, tools guide)
        and ``prepend_context`` (relevant memories). Never raises into the agent's turn: within
        ``recall.timeout_ms`` it returns what is ready and says what was left out and why."""
        tenant, r = args.tenant(user_id, agent_id), self.settings.recall
        budgets = Budgets(**r.model_dump(exclude={"timeout_ms"}))
        text = args.query(query)
        # The same floor as search: an off-topic prompt gets the persona and navigation only.
        request = SearchRequest(
            tenant,
            text,
            (Layer.L1, Layer.L0),
            r.candidates,
            plan=args.plan("hybrid", self.settings),
            min_score=self.settings.search.min_score,
        )
        sources = recall_sources(self._upper, tenant, lambda: self._searcher.search(request))
        result = await gather(sources, budgets, r.timeout_ms, text)
        upper = self._upper
        if upper is not None and (
            unreadable := upper.persona.problems(tenant) + upper.scenes.problems(tenant)
        ):
            notes = tuple(f"left out: {p}" for p in unreadable)
            result = dataclasses.replace(result, degradations=result.degradations + notes)
        self._warm(heated(result.hits), tenant)
        return result

    def _warm(self, atom_ids: list[str], tenant: Tenant) -> None:
        """Note the recalled atoms: the writer folds them into their scenes' heat in batches (the
        pipeline, under the tenant's lock). A read-only memory leaves heat to the writer."""
        if not self.read_only and self._upper is not None:
            self._pipeline.heat.note(tenant, atom_ids, self._clock.now_ms())
