"""Forgetting, pinning, expiry and export. One method per facade method, same name and parameters."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from memstrata.client.calls.base import Call, _query, _tenant
from memstrata.client.decode import decode, record
from memstrata.errors import ConfigError
from memstrata.models import (
    DEFAULT,
    Atom,
    ExportReport,
    ForgetReport,
    SceneEntry,
    SweepReport,
)


class ForgettingCalls:
    def export(
        self,
        out: str | Path,
        *,
        format: str = "jsonl",
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Call[ExportReport]:
        raise ConfigError(
            "export writes a folder on the machine it runs on: run `memstrata export` on the server's host"
        )

    def forget(self, *, user_id: str, agent_id: str | None = None) -> Call[ForgetReport]:
        params = _query(user_id=user_id, agent_id=agent_id)
        return Call("DELETE", "/v1/tenants", lambda d: record(ForgetReport, d), params=params)

    def pin_atom(
        self, atom_id: str, pinned: bool = True, *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> Call[Atom]:
        body = {"pinned": pinned, **_tenant(user_id, agent_id)}
        return Call("PUT", f"/v1/atoms/{quote(atom_id, safe='')}/pin", lambda d: record(Atom, d), body)

    def set_atom_ttl(
        self,
        atom_id: str,
        *,
        expires_at: int | str | None = None,
        ttl_seconds: float | None = None,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> Call[Atom]:
        body = {"expires_at": expires_at, "ttl_seconds": ttl_seconds, **_tenant(user_id, agent_id)}
        # Not idempotent with ttl_seconds (relative to the server's now); an absolute time is.
        path = f"/v1/atoms/{quote(atom_id, safe='')}/ttl"
        return Call("PUT", path, lambda d: record(Atom, d), body, idempotent=ttl_seconds is None)

    def sweep(self) -> Call[SweepReport]:
        return Call("POST", "/v1/pipeline/sweep", lambda d: record(SweepReport, d), {}, idempotent=False)

    def rebuild_scenes(self, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Call[list[SceneEntry]]:
        return Call(
            "POST",
            "/v1/scenes/rebuild",
            lambda d: decode(list[SceneEntry], d),
            _tenant(user_id, agent_id),
            idempotent=False,
        )
