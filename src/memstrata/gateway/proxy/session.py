"""Which memstrata session a proxied request belongs to: one proxied conversation is one session.

In order: the ``x-memstrata-session`` header; the session headers agent harnesses already send
(Claude Code's ``x-claude-code-session-id``, Codex's ``session-id``, ``x-session-id``, ``x-conversation-id``, ...); else
an id derived from the conversation's system prompt and first user message, which every request
of the conversation resends unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from memstrata.errors import InputError

SESSION_HEADER = "x-memstrata-session"
HARNESS_HEADERS = (
    "x-claude-code-session-id",  # Claude Code: one per run (``--continue`` keeps it)
    "session-id",  # Codex: one per run (also in ``thread-id`` and ``x-client-request-id``)
    "thread-id",
    "x-session-id",
    "x-conversation-id",
    "session_id",
    "conversation_id",
    "x-thread-id",
)
MAX_KEY = 200


def session_key(headers: Mapping[str, str], system: str, first_user: str) -> str:
    """The session key of a request (see the module docstring)."""
    given = headers.get(SESSION_HEADER)
    if given is not None:
        if not given.strip() or len(given) > MAX_KEY:
            raise InputError(f"must be 1 to {MAX_KEY} characters", item=SESSION_HEADER)
        return given.strip()
    for name in HARNESS_HEADERS:
        value = (headers.get(name) or "").strip()
        if value:
            return "proxy-" + _digest(name, value)
    return "proxy-" + _digest(system, first_user)


def _digest(*parts: str) -> str:
    raw = "\x1f".join(parts).encode("utf-8", "replace")
    return hashlib.blake2b(raw, digest_size=10).hexdigest()
