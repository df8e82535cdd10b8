"""Record-level reads and edits (the data plane). One method per facade method, same name and parameters."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from memstrata.client.calls.base import Call, _ids, _query, _tenant
from memstrata.client.decode import record
from memstrata.data_plane import Counts
from memstrata.models import (
    DEFAULT,
    Atom,
    Message,
    Persona,
    Scene,
)


class EditsCalls:
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
