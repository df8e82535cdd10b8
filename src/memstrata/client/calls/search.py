"""Search and recall. One method per facade method, same name and parameters."""

from __future__ import annotations

from collections.abc import Iterable

from memstrata.client.calls.base import Call, _tenant
from memstrata.client.decode import record
from memstrata.models import (
    DEFAULT,
    DEFAULT_LAYERS,
    Layer,
    SearchResult,
)
from memstrata.recall import RecallResult


class SearchCalls:
    def search(
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
    ) -> Call[SearchResult]:
        body = {
            "query": query,
            "limit": limit,
            "layers": [str(x).upper() for x in layers],
            "mode": mode,
            "min_score": min_score,
            "type": type,
            "scene": scene,
            "session_key": session_key,
            "since": since,
            "until": until,
            "include_superseded": include_superseded,
            **_tenant(user_id, agent_id),
        }
        return Call("POST", "/v1/search", lambda d: record(SearchResult, d), body)

    def search_conversations(
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
    ) -> Call[SearchResult]:
        body = {
            "query": query,
            "limit": limit,
            "min_score": min_score,
            "session_key": session_key,
            "mode": mode,
            "since": since,
            "until": until,
            **_tenant(user_id, agent_id),
        }
        return Call("POST", "/v1/search/conversations", lambda d: record(SearchResult, d), body)

    def recall(
        self, query: str, *, session_key: str | None = None, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> Call[RecallResult]:
        body = {"query": query, "session_key": session_key, **_tenant(user_id, agent_id)}
        return Call("POST", "/v1/recall", lambda d: record(RecallResult, d), body)
