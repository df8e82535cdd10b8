"""The request-building core of the HTTP client: one method per facade method, same name and
parameters, returning a ``Call`` (what to send, how to read the answer). The sync and async
clients run the same calls over their own transport; nothing here does I/O."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from memstrata.client.decode import decode, record
from memstrata.data_plane import Counts
from memstrata.errors import ConfigError
from memstrata.importers.tdai import TdaiImportReport
from memstrata.importers.types import ImportReport, ImportSession
from memstrata.layers.host_turns import TurnMessage, TurnResult
from memstrata.layers.l0.recorder import CaptureResult, MessageInput
from memstrata.models import (
    DEFAULT,
    Atom,
    Layer,
    Message,
    NewMessage,
    Persona,
    Scene,
    SceneEntry,
    SearchResult,
    Status,
    Tenant,
)
from memstrata.pipeline.coordinator import RunAllReport
from memstrata.recall import RecallResult

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Call(Generic[R]):
    """One request: ``idempotent`` calls are retried on any 5xx or connection failure, the others
    only when the request cannot have reached the server (connect errors, 503)."""

    method: str
    path: str
    read: Callable[[Any], R]
    json: Any = None
    params: Mapping[str, Any] | None = None
    idempotent: bool = True
    on_missing: Callable[[], R] | None = None  # the answer to a 404 not_found, when it is one


def _tenant(user_id: str | None, agent_id: str) -> dict[str, Any]:
    return {"user_id": user_id, "agent_id": agent_id}


def _query(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _message(m: MessageInput) -> dict[str, Any]:
    """A capture message as JSON. One without id or timestamp gets a random id here, so a retried
    request stores it once (the server would give it a random id of its own)."""
    raw = dataclasses.asdict(m) if isinstance(m, NewMessage) else dict(m)
    out = {k: (str(v) if k == "role" else v) for k, v in raw.items() if v is not None}
    if "id" not in out and "timestamp" not in out:
        out["id"] = uuid.uuid4().hex
    return out


def _turn_message(m: TurnMessage | Mapping[str, object]) -> dict[str, Any]:
    raw = dataclasses.asdict(m) if isinstance(m, TurnMessage) else dict(m)
    return {k: v for k, v in raw.items() if v is not None}


def _seed_session(s: ImportSession) -> dict[str, Any]:
    return {
        "sessionKey": s.session_key,
        "sessionId": s.session_id,
        "userId": s.tenant.user_id,
        "agentId": s.tenant.agent_id,
        "conversations": [
            [
                {k: str(v) if k == "role" else v for k, v in dataclasses.asdict(m).items() if v is not None}
                for m in s.messages
            ]
        ],
    }


def _ids(data: Any) -> list[str]:
    return [str(i) for i in data["deleted"]]


class Calls:
    """The facade's methods as HTTP calls (see ``docs/http-api.md`` for the routes)."""

    def capture(
        self,
        messages: Sequence[MessageInput],
        *,
        session_key: str = DEFAULT,
        session_id: str | None = None,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> Call[CaptureResult]:
        body = {
            "messages": [_message(m) for m in messages],
            "session_key": session_key,
            "session_id": session_id,
        }
        return Call(
            "POST", "/v1/capture", lambda d: record(CaptureResult, d), {**body, **_tenant(user_id, agent_id)}
        )

    def messages(
        self,
        *,
        user_id: str | None = DEFAULT,
        agent_id: str = DEFAULT,
        session_key: str | None = None,
        since: int | None = None,
        until: int | None = None,
        limit: int = 100,
        after_seq: int = 0,
    ) -> Call[list[Message]]:
        params = _query(
            user_id=user_id,
            agent_id=agent_id,
            session_key=session_key,
            since=since,
            until=until,
            limit=limit,
            after_seq=after_seq,
            all_tenants=user_id is None or None,
        )
        return Call("GET", "/v1/messages", lambda d: decode(list[Message], d), params=params)

    def atoms(
        self,
        *,
        user_id: str | None = DEFAULT,
        agent_id: str = DEFAULT,
        type: str | None = None,
        scene: str | None = None,
        since: int | None = None,
        until: int | None = None,
        include_superseded: bool = False,
        limit: int = 100,
        after_seq: int = 0,
    ) -> Call[list[Atom]]:
        params = _query(
            user_id=user_id,
            agent_id=agent_id,
            type=type,
            scene=scene,
            since=since,
            until=until,
            include_superseded=include_superseded,
            limit=limit,
            after_seq=after_seq,
            all_tenants=user_id is None or None,
        )
        return Call("GET", "/v1/atoms", lambda d: decode(list[Atom], d), params=params)

    def persona(self, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Call[Persona | None]:
        return Call(
            "GET", "/v1/persona", lambda d: decode(Persona | None, d), params=_tenant(user_id, agent_id)
        )

    def scenes(self, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Call[list[SceneEntry]]:
        return Call(
            "GET", "/v1/scenes", lambda d: decode(list[SceneEntry], d), params=_tenant(user_id, agent_id)
        )

    def read_scene(self, path: str, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Call[Scene]:
        return Call(
            "GET",
            f"/v1/scenes/{quote(path, safe='')}",
            lambda d: record(Scene, d),
            params=_tenant(user_id, agent_id),
        )

    def tenants(self) -> Call[list[Tenant]]:
        return Call("GET", "/v1/tenants", lambda d: decode(list[Tenant], d))

    def search(
        self,
        query: str,
        *,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
        limit: int = 10,
        layers: Iterable[str | Layer] = ("L1",),
        mode: str = "hybrid",
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
    ) -> Call[SearchResult]:
        body = {
            "query": query,
            "limit": limit,
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

    def import_tdai(self, path: str | Path) -> Call[TdaiImportReport]:
        raise ConfigError(
            "import_tdai reads a directory on the machine it runs on: run `memstrata import --from-tdai` "
            "on the server's host (or import seed JSON with import_seed)"
        )

    def get_message(
        self, message_id: str, *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> Call[Message]:
        path = f"/v1/messages/{quote(message_id, safe='')}"
        return Call("GET", path, lambda d: record(Message, d), params=_tenant(user_id, agent_id))

    def delete_messages(
        self,
        ids: Sequence[str] = (),
        *,
        session_keys: Sequence[str] = (),
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> Call[list[str]]:
        body = {"ids": list(ids), "session_keys": list(session_keys), **_tenant(user_id, agent_id)}
        return Call("POST", "/v1/messages/delete", _ids, body)

    def get_atom(self, atom_id: str, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Call[Atom]:
        path = f"/v1/atoms/{quote(atom_id, safe='')}"
        return Call("GET", path, lambda d: record(Atom, d), params=_tenant(user_id, agent_id))

    def update_atom(
        self,
        atom_id: str,
        *,
        content: str | None = None,
        type: str | None = None,
        priority: int | None = None,
        scene_name: str | None = None,
        follow: bool = False,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> Call[Atom]:
        body = _query(content=content, type=type, priority=priority, scene_name=scene_name, follow=follow)
        path = f"/v1/atoms/{quote(atom_id, safe='')}"
        return Call(
            "PATCH", path, lambda d: record(Atom, d), {**body, **_tenant(user_id, agent_id)}, idempotent=False
        )

    def delete_atoms(
        self, ids: Sequence[str], *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> Call[list[str]]:
        return Call("POST", "/v1/atoms/delete", _ids, {"ids": list(ids), **_tenant(user_id, agent_id)})

    def write_scene(
        self,
        path: str,
        content: str,
        *,
        summary: str | None = None,
        create: bool = True,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> Call[Scene]:
        body = {"content": content, "summary": summary, "create": create, **_tenant(user_id, agent_id)}
        return Call("PUT", f"/v1/scenes/{quote(path, safe='')}", lambda d: record(Scene, d), body)

    def delete_scene(self, path: str, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Call[bool]:
        return Call(
            "DELETE",
            f"/v1/scenes/{quote(path, safe='')}",
            lambda d: True,
            params=_tenant(user_id, agent_id),
            on_missing=lambda: False,
        )

    def write_persona(self, body: str, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Call[Persona]:
        return Call(
            "PUT", "/v1/persona", lambda d: record(Persona, d), {"body": body, **_tenant(user_id, agent_id)}
        )

    def counts(
        self,
        *,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
        session_key: str | None = None,
        type: str | None = None,
        since: int | None = None,
        until: int | None = None,
        scene_prefix: str | None = None,
    ) -> Call[Counts]:
        params = _query(
            user_id=user_id,
            agent_id=agent_id,
            session_key=session_key,
            type=type,
            since=since,
            until=until,
            scene_prefix=scene_prefix,
        )
        return Call("GET", "/v1/counts", lambda d: record(Counts, d), params=params)

    def before_prompt(
        self,
        prompt: str,
        *,
        session_key: str = DEFAULT,
        transcript_length: int | None = None,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> Call[RecallResult]:
        body = {
            "prompt": prompt,
            "session_key": session_key,
            "transcript_length": transcript_length,
            **_tenant(user_id, agent_id),
        }
        return Call("POST", "/v1/turns/before-prompt", lambda d: record(RecallResult, d), body)

    def turn_committed(
        self,
        messages: Sequence[TurnMessage | Mapping[str, object]],
        *,
        session_key: str = DEFAULT,
        session_id: str | None = None,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> Call[TurnResult]:
        body = {
            "messages": [_turn_message(m) for m in messages],
            "session_key": session_key,
            "session_id": session_id,
            **_tenant(user_id, agent_id),
        }
        return Call("POST", "/v1/turns/committed", lambda d: record(TurnResult, d), body)

    def import_seed(
        self, data: object, *, process: bool = False, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> Call[ImportReport]:
        # Idempotent: messages without ids get stable ones, so a retry stores nothing twice.
        body = {"data": data, "process": process, **_tenant(user_id, agent_id)}
        return Call("POST", "/v1/import", lambda d: record(ImportReport, d), body)

    def import_sessions(
        self, sessions: Sequence[ImportSession], *, process: bool = True, on_progress: Any = None
    ) -> Call[ImportReport]:
        """The sessions go as seed JSON (their tenants included); progress is not reported."""
        data = {"sessions": [_seed_session(s) for s in sessions]}
        return Call(
            "POST", "/v1/import", lambda d: record(ImportReport, d), {"data": data, "process": process}
        )

    def health(self) -> Call[dict[str, Any]]:
        """The server's health (not a facade method): version, store, embedder, pipeline lag."""
        return Call("GET", "/v1/health", lambda d: dict(d))
