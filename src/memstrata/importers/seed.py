"""The seed history format: sessions of conversations of ``{role, content}`` messages.

Format A is ``{"sessions": [session, ...]}``, format B the bare list ``[session, ...]``. A session::

    {"sessionKey": "chat-1", "sessionId"?: "...", "userId"?: "...", "agentId"?: "...",
     "conversations": [[message, ...], ...]}

and a message ``{"role": "user"|"assistant", "content": str, "timestamp"?: epoch ms | epoch s |
ISO 8601, "id"?: str, "name"?: str}``. Conversations are flattened in order.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

from memstrata.errors import ValidationError
from memstrata.importers._validate import as_list, as_object, optional_str, required_str, type_name
from memstrata.importers.types import ImportSession
from memstrata.models import DEFAULT, NewMessage, Role, Tenant

# Epoch values below this are seconds: 10^11 s is the year 5138, 10^11 ms is March 1973.
_SECONDS_LIMIT = 10**11
_MAX_MS = 10**15  # about 31,700 years from 1970: beyond is a mistake (and overflows some stores)


def parse_seed(data: object) -> list[ImportSession]:
    """Parse a seed document (format A or B) into sessions, validating every item.

    Raises ``ValidationError`` whose ``item`` names the first malformed item exactly, e.g.
    ``sessions[2].conversations[0][1].role`` (format B paths start at ``[2]``).
    """
    if isinstance(data, dict):
        if "sessions" not in data:
            raise ValidationError("a seed object needs a 'sessions' array", item="sessions")
        sessions, prefix = as_list(data["sessions"], "sessions"), "sessions"
    elif isinstance(data, list):
        sessions, prefix = data, ""
    else:
        raise ValidationError(f"a seed document is an object or an array, got {type_name(data)}")
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
        raise ValidationError(f"must be 'user' or 'assistant', got {role!r}", item=f"{item}.role")
    return NewMessage(
        role=Role(role),
        content=required_str(obj, "content", item, allow_empty=True),
        id=optional_str(obj, "id", item),
        name=optional_str(obj, "name", item),
        timestamp=parse_timestamp(obj.get("timestamp"), f"{item}.timestamp"),
    )


def parse_timestamp(value: object, item: str) -> int | None:
    """Epoch milliseconds from epoch ms, epoch seconds (< 10^11) or an ISO 8601 string; None if absent.

    An ISO time without a timezone is taken as UTC.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValidationError(
            f"expected epoch milliseconds or an ISO 8601 string, got {type_name(value)}", item=item
        )
    if isinstance(value, str):
        ms = _iso_ms(value, item)
    elif not math.isfinite(value) or value < 0:
        raise ValidationError(f"not a valid epoch time: {value!r}", item=item)
    else:
        ms = round(value * 1000) if value < _SECONDS_LIMIT else round(value)
    if abs(ms) > _MAX_MS:
        raise ValidationError(f"not a time within about 30,000 years of 1970: {value!r}", item=item)
    return ms


def _iso_ms(text: str, item: str) -> int:
    try:
        moment = datetime.fromisoformat(text.strip())
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return round(moment.timestamp() * 1000)
    except (ValueError, OverflowError) as exc:
        raise ValidationError(f"not an ISO 8601 time: {text!r}", item=item) from exc
