"""Reading and capturing each layer (L0 to L3). One method per facade method, same name and parameters."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from memstrata.client.calls.base import Call, _message, _query, _tenant
from memstrata.client.decode import decode, record
from memstrata.layers.l0.recorder import CaptureResult, MessageInput
from memstrata.models import (
    DEFAULT,
    Atom,
    Message,
    Persona,
    Scene,
    SceneEntry,
    Tenant,
)


class RecordsCalls:
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
