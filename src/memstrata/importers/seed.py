"""The seed history format: sessions of conversations of ``{role, content}`` messages.

Format A is ``{"sessions": [session, ...]}``, format B the bare list ``[session, ...]``. A session::

    {"sessionKey": "chat-1", "sessionId"?: "...", "userId"?: "...", "agentId"?: "...",
     "conversations": [[message, ...], ...]}

and a message ``{"role": "user"|"assistant", "content": str, "timestamp"?: epoch ms | epoch s |
ISO 8601, "id"?: str, "name"?: str}``. Conversations are flattened in order.
"""

from __future__ import annotations

from memstrata.errors import InputError
from memstrata.importers._validate import as_list, as_object, optional_str, required_str, type_name
from memstrata.importers.types import ImportSession
from memstrata.layers.l0.times import epoch_ms
from memstrata.models import DEFAULT, NewMessage, Role, Tenant


def parse_seed(data: object) -> list[ImportSession]:
    """Parse a seed document (format A or B) into sessions, validating every item.

    Raises ``InputError`` whose ``item`` names the first malformed item exactly, e.g.
    ``sessions[2].conversations[0][1].role`` (format B paths start at ``[2]``).
    """
    if isinstance(data, dict):
        if "sessions" not in data:
            raise InputError("a seed object needs a 'sessions' array", item="sessions")
        sessions, prefix = as_list(data["sessions"], "sessions"), "sessions"
    elif isinstance(data, list):
        sessions, prefix = data, ""
    else:
        raise InputError(f"a seed document is an object or an array, got {type_name(data)}")
    return [_session(raw, f"{prefix}[{i}]") for i, raw in enumerate(sessions)]


def _session(raw: object, item: str) -> ImportSession:
    obj = as_object(raw, item)
    session_key = required_str(obj, "sessionKey", item)
    session_id = optional_str(obj, "sessionId", item) or session_key
    tenant = Tenant(
        user_id=optional_str(obj, "userId", item) or DEFAULT,
        agent_id=optional_str(obj, "agentId", item) or DEFAULT,
    )
    conversations = as_list(obj.get("conversations"), f"{item}.conversations")
    messages: list[NewMessage] = []
    for c, conversation in enumerate(conversations):
        conv_item = f"{item}.conversations[{c}]"
        for m, message in enumerate(as_list(conversation, conv_item)):
            messages.append(_message(message, f"{conv_item}[{m}]"))
    return ImportSession(tenant, session_key, session_id, tuple(messages))


def _message(raw: object, item: str) -> NewMessage:
    obj = as_object(raw, item)
    role = required_str(obj, "role", item)
    if role not in (Role.USER, Role.ASSISTANT):
        raise InputError(f"must be 'user' or 'assistant', got {role!r}", item=f"{item}.role")
    return NewMessage(
        role=Role(role),
        content=required_str(obj, "content", item, allow_empty=True),
        id=optional_str(obj, "id", item),
        name=optional_str(obj, "name", item),
        timestamp=parse_timestamp(obj.get("timestamp"), f"{item}.timestamp"),
    )


def parse_timestamp(value: object, item: str) -> int | None:
    """Epoch milliseconds (see ``layers.l0.times.epoch_ms``: the rule every input path shares)."""
    return epoch_ms(value, item)
