"""Search across layers, and recall before a prompt."""

from __future__ import annotations

import asyncio
import logging

from memstrata import operations as ops
from memstrata.facade.core import FacadeCore, operation
from memstrata.models import AtomFilter, MessageFilter, SearchResult
from memstrata.operations import arguments as args
from memstrata.recall import RecallResult
from memstrata.retrieval.request import SearchRequest

log = logging.getLogger(__name__)


class SearchMethods(FacadeCore):
    @operation(ops.Search)
    async def search(self, op: ops.Search) -> SearchResult:
        meta = args.filters(op.filters)
        req = SearchRequest(
            args.tenant(op.user_id, op.agent_id),
            args.query(op.query),
            tuple(args.layer(x) for x in op.layers),
            args.limit(op.limit),
            MessageFilter(op.session_key, op.since, op.until, meta),
            AtomFilter(
                args.atom_type(op.type), op.scene, op.since, op.until, op.include_superseded, metadata=meta
            ),
            args.plan(op.mode, self.settings),
            *args.floor(op.min_score, self.settings),
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
            min_score=op.min_score,
            filters=op.filters,
        )

    @operation(ops.Recall)
    async def recall(self, op: ops.Recall) -> RecallResult:
        tenant = args.tenant(op.user_id, op.agent_id)
        return await self._recall(tenant, op.query, tools=op.tools, filters=args.filters(op.filters))
