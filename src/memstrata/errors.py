"""Every error memstrata raises, in one tree.

    MemstrataError
    ├── ConfigError              settings or wiring that cannot work (bad URL, unknown setting)
    │   └── MissingExtraError    an optional dependency is not installed; says what to install
    ├── AccessError              the caller's key may not reach that tenant or route (403)
    │   └── TooManyFailuresError a client sent too many bad keys: wait ``retry_after`` s (429)
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
    ├── NotDoneError             work handed to the pipeline's workers was not done in time (kept)
    └── RemoteError              a memstrata server failed or could not be reached (HTTP client)
        └── CircuitOpenError     the client stopped calling a failing server for a while

Each error carries the context it is about (``tenant``, ``item``, ``path``, ``kind``/``key``,
``holder``) as attributes, so a caller can act on it without parsing the message.

``WIRE`` (at the end) is the one table from an error to its HTTP status and stable code: the
gateway answers with it (``wire_of``), and the HTTP client raises the same class back from the
code (``WIRE_BY_CODE``), the way httpx keeps one mapping for its transport errors.

``storage_errors`` turns the ``OSError`` of any file operation (disk full, read-only file system,
no permission) into a ``StorageError`` naming the path and the cause in words.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
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


class TooManyFailuresError(AccessError):
    """This client sent too many keys that are not keys of the server: the next unknown key is
    checked after ``retry_after`` seconds (a key that worked before is checked at once)."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


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


# What the usual refusals mean, in the words of a status line.
_CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EIO: "input/output error",
    errno.ENAMETOOLONG: "the file name is too long",
}


def cause_of(exc: OSError) -> str:
    """A short reason for an ``OSError``, e.g. ``the disk is full (ENOSPC)``."""
    name = errno.errorcode.get(exc.errno or 0, "")
    text = _CAUSES.get(exc.errno or 0) or (exc.strerror or str(exc)).strip()
    return f"{text} ({name})" if name else text


def storage_error(exc: OSError, path: Path | str, action: str = "cannot write") -> StorageError:
    """The ``StorageError`` for ``exc``, naming the file it was about (``exc.filename`` when set)."""
    where = exc.filename if isinstance(exc.filename, str) else str(path)
    return StorageError(where, cause_of(exc), action=action)


@contextmanager
def storage_errors(path: Path | str, action: str = "cannot write") -> Iterator[None]:
    """Run a block of file operations; an ``OSError`` leaves it as a ``StorageError``."""
    try:
        yield
    except OSError as exc:
        raise storage_error(exc, path, action) from exc


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


class NotDoneError(MemstrataError):
    """A server handed pipeline work (``end_session``, ``run_all``, an import with ``process``) to
    its workers and they did not finish it within ``server.pipeline_wait_seconds``. Nothing is
    lost: the messages are stored, the work stays marked due in the store and the workers go on
    with it; calling again waits again."""


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


# --- errors on the wire ---------------------------------------------------------------------------

Details = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Wire:
    """How errors of class ``kind`` cross HTTP: ``status`` and stable ``code``; ``details``, the
    attributes sent as fields of the error body; ``field``, the field at fault (``"item"``: the
    error's ``item``); ``back``, the error the client raises from a body with this code (None:
    a server failure, raised as ``RemoteError`` with the code). ``sent=False`` marks a code the
    server answers without an exception (its middleware), listed for the client to read."""

    kind: type[MemstrataError]
    status: int
    code: str
    details: tuple[str, ...] = ()
    field: str | None = None
    back: Callable[[str, Details], MemstrataError | None] | None = None
    sent: bool = True

    def field_of(self, exc: MemstrataError) -> str | None:
        return getattr(exc, "item", None) if self.field == "item" else self.field

    def details_of(self, exc: MemstrataError) -> dict[str, Any]:
        return {name: getattr(exc, name) for name in self.details}


def _input(message: str, err: Details) -> InputError:
    field = err.get("field")
    return InputError(message.removeprefix(f"{field}: ") if field else message, item=field)


def _refused(message: str, err: Details) -> ConfigError:
    return ConfigError(f"the memstrata server refused the call: {message}")


def _not_found(message: str, err: Details) -> NotFoundError | None:
    # A 404 without a kind is an unknown route, not a missing record.
    return NotFoundError(str(err["kind"]), str(err.get("key", ""))) if "kind" in err else None


# Most specific first: an error answers with the first row its class matches.
WIRE: tuple[Wire, ...] = (
    Wire(
        TooManyFailuresError,
        429,
        "too_many_failures",
        ("retry_after",),
        back=lambda m, err: TooManyFailuresError(m, retry_after=int(err.get("retry_after", 1))),
    ),
    Wire(AccessError, 403, "forbidden", back=lambda m, err: AccessError(m)),
    Wire(NotFoundError, 404, "not_found", ("kind", "key"), back=_not_found),
    Wire(
        PathError,
        422,
        "invalid_path",
        ("path",),
        "path",
        lambda m, err: PathError(m.rsplit(": ", 1)[0], path=str(err.get("path", ""))),
    ),
    Wire(
        ConflictError,
        409,
        "conflict",
        ("current",),
        back=lambda m, err: ConflictError(m, current=err.get("current")),
    ),
    Wire(
        TurnLimitError,
        429,
        "turn_limit",
        ("turn_id", "limit"),
        back=lambda m, err: TurnLimitError(str(err.get("turn_id", "")), int(err.get("limit", 0))),
    ),
    Wire(InputError, 422, "validation_error", field="item", back=_input),
    Wire(ConfigError, 409, "not_configured", back=_refused),
    Wire(StoreError, 503, "store_unavailable"),
    Wire(NotDoneError, 503, "not_done", back=lambda m, err: NotDoneError(m)),
    Wire(EmbeddingError, 503, "embedding_unavailable"),
    Wire(EngineError, 503, "engine_unavailable"),
    Wire(RemoteError, 503, "engine_unavailable"),
    Wire(InputError, 400, "invalid_json", back=_input, sent=False),
    Wire(InputError, 413, "payload_too_large", back=_input, sent=False),
    Wire(ConfigError, 401, "unauthorized", back=_refused, sent=False),
)
WIRE_BY_CODE = {w.code: w for w in reversed(WIRE)}  # a code's first row wins


def wire_of(exc: BaseException) -> Wire | None:
    """The row an exception answers with; None for an error that is not memstrata's (a bug: 500)."""
    return next((w for w in WIRE if w.sent and isinstance(exc, w.kind)), None)
