"""The seed history format: sessions of conversations of ``{role, content}`` messages.

Format A is ``{"sessions": [session, ...]}``, format B the bare list ``[session, ...]``. A session::

    {"sessionKey": "chat-1", "sessionId"?: "...", "userId"?: "...", "agentId"?: "...",
     "conversations": [[message, ...], ...]}

and a message ``{"role": "user"|"assistant", "content": str, "timestamp"?: epoch ms | epoch s |
ISO 8601, "id"?: str, "name"?: str, "metadata"?: object}``. Conversations are flattened in order.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, TypeAdapter

from memstrata.errors import InputError
from memstrata.interchange.sessions import ImportSession
from memstrata.layers.l0.times import epoch_ms
from memstrata.models import DEFAULT, NewMessage, Role, Tenant
from memstrata.models.validation import NonBlank, Record, check, type_name


def parse_timestamp(value: object, item: str) -> int | None:
    """Epoch milliseconds (see ``layers.l0.times.epoch_ms``: the rule every input path shares)."""
    return epoch_ms(value, item)


def _epoch(value: object) -> int | None:
    try:
        return epoch_ms(value, "")
    except InputError as exc:  # pydantic reports a ValueError at the field's own path
        raise ValueError(exc.message) from None


EpochMs = Annotated[int | None, BeforeValidator(_epoch)]


class SeedMessage(Record):
    role: Literal["user", "assistant"]
    content: str
    id: NonBlank | None = None
    name: NonBlank | None = None
    timestamp: EpochMs = None
    metadata: dict[str, Any] | None = None  # checked with the rest of the message at capture

    def message(self) -> NewMessage:
        return NewMessage(Role(self.role), self.content, self.id, self.name, self.timestamp, self.metadata)


class SeedSession(Record):
    session_key: NonBlank = Field(alias="sessionKey")
    session_id: NonBlank | None = Field(None, alias="sessionId")
    user_id: NonBlank | None = Field(None, alias="userId")
    agent_id: NonBlank | None = Field(None, alias="agentId")
    conversations: list[list[SeedMessage]]

    def session(self) -> ImportSession:
        messages = tuple(m.message() for conversation in self.conversations for m in conversation)
        tenant = Tenant(self.user_id or DEFAULT, self.agent_id or DEFAULT)
        return ImportSession(tenant, self.session_key, self.session_id or self.session_key, messages)


class SeedDocument(Record):
    sessions: list[SeedSession]


_FORMAT_A = TypeAdapter(SeedDocument)
_FORMAT_B = TypeAdapter(list[SeedSession])


def parse_seed(data: object) -> list[ImportSession]:
    """Parse a seed document (format A or B) into sessions, validating every item.

    Raises ``InputError`` whose ``item`` names the first malformed item exactly, e.g.
    ``sessions[2].conversations[0][1].role`` (format B paths start at ``[2]``).
    """
    if isinstance(data, dict):
        sessions = check(_FORMAT_A, data).sessions
    elif isinstance(data, list):
        sessions = check(_FORMAT_B, data)
    else:
        raise InputError(f"a seed document is an object or an array, got {type_name(data)}")
    return [s.session() for s in sessions]
