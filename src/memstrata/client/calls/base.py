"""What every request of the HTTP client is made of: a ``Call`` (what to send, how to read the
answer) and the small encoders the topic modules share. Nothing here does I/O."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from memstrata.importers.types import ImportSession
from memstrata.layers.host_turns import TurnMessage
from memstrata.layers.l0.recorder import MessageInput
from memstrata.models import (
    NewMessage,
)

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
