"""The host turn lifecycle and imports. One method per facade method, same name and parameters."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memstrata.client.calls.base import Call, _seed_session, _tenant, _turn_message
from memstrata.client.decode import record
from memstrata.errors import ConfigError
from memstrata.importers.tdai import TdaiImportReport
from memstrata.importers.types import ImportReport, ImportSession
from memstrata.layers.host_turns import TurnMessage, TurnResult
from memstrata.models import (
    DEFAULT,
    Atom,
)
from memstrata.recall import RecallResult


class TurnsCalls:
    def remember(
        self,
        text: str,
        *,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
        type: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Call[Atom]:
        body = {"text": text, "type": type, "metadata": metadata, **_tenant(user_id, agent_id)}
        return Call("POST", "/v1/remember", lambda d: record(Atom, d), body)  # same text, same atom

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

    def import_tdai(self, path: str | Path) -> Call[TdaiImportReport]:
        raise ConfigError(
            "import_tdai reads a directory on the machine it runs on: run `memstrata import --from-tdai` "
            "on the server's host (or import seed JSON with import_seed)"
        )

    def import_export(self, path: str | Path) -> Call[TdaiImportReport]:
        raise ConfigError(
            "import_export reads a folder on the machine it runs on: run `memstrata import --from-export` "
            "on the server's host"
        )
