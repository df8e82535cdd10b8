"""Search across layers, and recall before a prompt."""

from __future__ import annotations

import asyncio
import dataclasses
import logging

from memstrata import arguments as args
from memstrata import operations as ops
from memstrata.facade.core import FacadeCore, operation
from memstrata.models import (
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
    @operation(ops.Search)
    async def search(self, op: ops.Search) -> SearchResult:
        req = SearchRequest(
            args.tenant(op.user_id, op.agent_id),
            args.query(op.query),
            tuple(args.layer(x) for x in op.layers),
            args.limit(op.limit),
            MessageFilter(op.session_key, op.since, op.until),
            AtomFilter(args.atom_type(op.type), op.scene, op.since, op.until, op.include_superseded),
            args.plan(op.mode, self.settings),
        )
        return await asyncio.to_thread(self._searcher.search, req)

    @operation(ops.SearchConversations)
    async def search_conversations(self, op: ops.SearchConversations) -> SearchResult:
        return await self.search(
            op.query,
            user_id=op.user_id,
            agent_id=op.agent_id,
            limit=op.limit,
            layers=("L0",),
            mode=op.mode,
            session_key=op.session_key,
            since=op.since,
            until=op.until,
        )

    @operation(ops.Recall)
    async def recall(self, op: ops.Recall) -> RecallResult:
        tenant, r = args.tenant(op.user_id, op.agent_id), self.settings.recall
        budgets = Budgets(**r.model_dump(exclude={"timeout_ms"}))
        text = args.query(op.query)
        request = SearchRequest(
            tenant, text, (Layer.L1, Layer.L0), r.candidates, plan=args.plan("hybrid", self.settings)
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
