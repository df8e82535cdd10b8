"""What every request of the HTTP client is made of: a ``Call`` (what to send, how to read the
answer) and the encoders of the arguments that are records (messages, sessions). Nothing here does I/O."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from memstrata.interchange.sessions import ImportSession
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


def message(m: MessageInput) -> dict[str, Any]:
    """A capture message as JSON. One without id or timestamp gets a random id here, so a retried
    request stores it once (the server would give it a random id of its own)."""
    raw = dataclasses.asdict(m) if isinstance(m, NewMessage) else dict(m)
    out = {k: (str(v) if k == "role" else v) for k, v in raw.items() if v is not None}
    if "id" not in out and "timestamp" not in out:
        out["id"] = uuid.uuid4().hex
    return out


def turn_message(m: TurnMessage | Mapping[str, object]) -> dict[str, Any]:
    raw = dataclasses.asdict(m) if isinstance(m, TurnMessage) else dict(m)
    return {k: v for k, v in raw.items() if v is not None}


def seed_session(s: ImportSession) -> dict[str, Any]:
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
