"""Every error memstrata raises, in one tree.

    MemstrataError
    ├── ConfigError              settings or wiring that cannot work (bad URL, unknown setting)
    │   └── MissingExtraError    an optional dependency is not installed; says what to install
    ├── AccessError              the caller's key may not reach that tenant or route (403)
    ├── InputError               the caller's input is invalid; nothing was written (``item``)
    │   ├── NotFoundError        no such message, atom or scene for this tenant (``kind``, ``key``)
    │   ├── PathError            a path escapes its sandbox (``path``)
    │   ├── ConflictError        the request contradicts the stored state (edits a superseded atom)
    │   └── TurnLimitError       an agent made more search calls in one turn than allowed
    ├── StoreError               the store failed or is in a state it cannot serve
    │   ├── SchemaError          the database was written by a newer memstrata
    │   ├── StorageError         the disk refused a read or write (full, read-only, no permission)
    │   ├── DirectoryLockedError another process owns the data directory (``holder``)
    │   └── ReadOnlyError        a write was asked of a memory opened read-only
    ├── EmbeddingError           the embedder failed (timeout, HTTP error, wrong dimensions)
    ├── EngineError              an engine could not finish a stage; the stage is retried later
    │   ├── ModelError           the chat model failed (timeout, HTTP status, refused)
    │   │   ├── ContextLengthError   the prompt does not fit the model's context window
    │   │   └── ToolsUnsupportedError the server has no tool calling (400 to ``tools``)
    │   └── ParseError           the model's reply could not be turned into the expected shape
    └── RemoteError              a memstrata server failed or could not be reached (HTTP client)
        └── CircuitOpenError     the client stopped calling a failing server for a while

Each error carries the context it is about (``tenant``, ``item``, ``path``, ``kind``/``key``,
``holder``) as attributes, so a caller can act on it without parsing the message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class MemstrataError(Exception):
    """Base class of every memstrata error."""

    def __init__(self, message: str, *, tenant: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.tenant = tenant


class ConfigError(MemstrataError):
    """Settings or wiring that cannot work."""


class MissingExtraError(ConfigError):
    """An optional dependency is missing; the message names the package to install."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(f"{purpose} needs the '{package}' package: pip install 'memstrata[{extra}]'")
        self.package = package
        self.extra = extra


class AccessError(MemstrataError):
    """The caller's key may not reach the tenant or the route it asked for; nothing was read or
    written. A scoped key naming another tenant gets this, never that tenant's data."""


class InputError(MemstrataError):
    """The caller's input is invalid; nothing was written.

    ``item`` locates the offending part when there is one, e.g. ``sessions[2].conversations[0][1]``
    or ``messages[3].timestamp``; the message then starts with it.
    """

    def __init__(self, message: str, *, item: str | None = None, tenant: str | None = None) -> None:
        super().__init__(f"{item}: {message}" if item else message, tenant=tenant)
        self.item = item


class NotFoundError(InputError):
    """No record of that kind and key for this tenant (``kind``: message, atom or scene)."""

    def __init__(self, kind: str, key: str, *, tenant: str | None = None) -> None:
        super().__init__(f"no such {kind}: {key!r}", tenant=tenant)
        self.kind = kind
        self.key = key


class PathError(InputError):
    """A path escapes its sandbox, or is not a path this memory can hold."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(f"{message}: {path!r}")
        self.path = path


class ConflictError(InputError):
    """The request contradicts the stored state, e.g. it edits an atom that a newer version has
    superseded; ``current`` names the record to act on instead, when there is one."""

    def __init__(self, message: str, *, current: str | None = None, tenant: str | None = None) -> None:
        super().__init__(message, tenant=tenant)
        self.current = current


class TurnLimitError(InputError):
    """An agent exceeded the search calls allowed per turn; ``limit`` says how many."""

    def __init__(self, turn_id: str, limit: int) -> None:
        super().__init__(
            f"search limit reached: at most {limit} memory searches per turn (turn {turn_id!r}); "
            "answer with what you have"
        )
        self.turn_id = turn_id
        self.limit = limit


class StoreError(MemstrataError):
    """The store failed or cannot serve the request."""


class SchemaError(StoreError):
    """The database schema is newer than this memstrata understands."""


class StorageError(StoreError):
    """The file system or SQLite refused an operation on ``path``: disk full, read-only file system
    or database, no permission, I/O error. ``cause`` says which, in a few words; the message is
    one line naming both. What was committed before stays readable.
    """

    def __init__(self, path: str, cause: str, *, action: str = "cannot write") -> None:
        super().__init__(f"{action} {path}: {cause}")
        self.path = path
        self.cause = cause


class DirectoryLockedError(StoreError):
    """Another process owns the data directory. ``holder`` describes it (pid, command, since,
    and ``url`` when it is a server the CLI can go through)."""

    def __init__(self, message: str, *, holder: Mapping[str, Any]) -> None:
        super().__init__(message)
        self.holder = dict(holder)


class ReadOnlyError(StoreError):
    """A write was asked of a memory opened read-only."""


class EmbeddingError(MemstrataError):
    """The embedder failed."""


class EngineError(MemstrataError):
    """An engine could not finish a pipeline stage; the stage stays pending and is retried."""


class ModelError(EngineError):
    """The chat model failed: timeout, HTTP status, connection."""


class ContextLengthError(ModelError):
    """The server refused the prompt as longer than the model's context window (llama.cpp, vLLM
    and OpenAI each answer 400 with their own wording). The caller can send less and try again."""


class ToolsUnsupportedError(ModelError):
    """The server refused a request because it carried ``tools`` (no tool-calling template or
    support). The tool loop then speaks its JSON action protocol instead."""


class ParseError(EngineError):
    """The model's reply could not be parsed into the expected response model."""

    def __init__(self, message: str, *, reply: str = "") -> None:
        super().__init__(message)
        self.reply = reply


class RemoteError(MemstrataError):
    """A memstrata server answered with a server-side failure (``status`` 5xx) or could not be
    reached (``status`` None); ``code`` is the server's stable error code when it sent one."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class CircuitOpenError(RemoteError):
    """The client saw too many failures in a row and refuses calls until ``retry_at`` (epoch s)."""

    def __init__(self, message: str, *, retry_at: float) -> None:
        super().__init__(message, code="circuit_open")
        self.retry_at = retry_at
