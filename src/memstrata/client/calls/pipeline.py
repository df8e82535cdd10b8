"""The pipeline and store upkeep. One method per facade method, same name and parameters."""

from __future__ import annotations

from typing import Any

from memstrata.client.calls.base import Call, _tenant
from memstrata.client.decode import record
from memstrata.models import (
    DEFAULT,
    Status,
)
from memstrata.pipeline.coordinator import RunAllReport


class PipelineCalls:
    def run_pending(self) -> Call[int]:
        return Call("POST", "/v1/pipeline/run", lambda d: int(d["runs"]), {}, idempotent=False)

    def run_all(self) -> Call[RunAllReport]:
        return Call("POST", "/v1/pipeline/run-all", lambda d: record(RunAllReport, d), {}, idempotent=False)

    def request_persona(
        self, reason: str = "explicit request", *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> Call[None]:
        body = {"reason": reason, **_tenant(user_id, agent_id)}
        return Call("POST", "/v1/persona/request", lambda d: None, body)

    def end_session(
        self, session_key: str = DEFAULT, *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> Call[None]:
        body = {"session_key": session_key, **_tenant(user_id, agent_id)}
        return Call("POST", "/v1/sessions/end", lambda d: None, body)

    def status(self) -> Call[Status]:
        return Call("GET", "/v1/status", lambda d: record(Status, d))

    def repair(self) -> Call[list[str]]:
        return Call("POST", "/v1/repair", lambda d: [str(x) for x in d["repaired"]], {}, idempotent=False)

    def reindex(self) -> Call[int]:
        return Call("POST", "/v1/reindex", lambda d: int(d["embedded"]), {}, idempotent=False)

    def health(self) -> Call[dict[str, Any]]:
        """The server's health (not a facade method): version, store, embedder, pipeline lag."""
        return Call("GET", "/v1/health", lambda d: dict(d))
