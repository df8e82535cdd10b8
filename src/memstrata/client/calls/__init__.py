"""The request-building core of the HTTP client: ``call_of`` turns one operation (an instance of
its declaration in ``memstrata.operations``: the arguments the caller gave) into a ``Call``
(what to send, how to read the answer), by the declaration's ``Route``. No method is written
here: a parameter added to a declaration is sent without a change to the client. The sync and
async clients run the same calls over their own transport; nothing here does I/O."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from memstrata import operations as ops
from memstrata.client.calls.base import Call, message, seed_session, turn_message
from memstrata.client.decode import decode
from memstrata.errors import ConfigError

R = TypeVar("R")

# Arguments that are records or need a spelling of their own on the wire, per operation.
_ENCODERS: dict[tuple[type[ops.Operation[Any]], str], Callable[[Any], Any]] = {
    # None goes as null: the server's 422 names the field, as it does for an empty list.
    (ops.Capture, "messages"): lambda ms: None if ms is None else [message(m) for m in ms],
    (ops.TurnCommitted, "messages"): lambda ms: [turn_message(m) for m in ms],
    (ops.Search, "layers"): lambda ls: [str(x.value if isinstance(x, enum.Enum) else x).upper() for x in ls],
    # A listing's filters go in the query string, as JSON text.
    (ops.Messages, "filters"): lambda f: None if f is None else json.dumps(_encode(f)),
    (ops.Atoms, "filters"): lambda f: None if f is None else json.dumps(_encode(f)),
}


def call_of(op: ops.Operation[R]) -> Call[R]:
    """The request for ``op``; raises ``ConfigError`` for an operation that runs only where its
    files are."""
    spec = type(op)
    route = spec.ROUTE
    if route.local is not None:
        raise ConfigError(route.local)
    values = {f.name: getattr(op, f.name) for f in dataclasses.fields(op)}  # type: ignore[arg-type]
    path = route.path.format(**{n: quote(str(values.pop(n)), safe="") for n in route.path_names})
    sent = {k: _ENCODERS.get((spec, k), _encode)(v) for k, v in values.items()}
    if isinstance(op, ops.ImportSessions):  # sessions go as seed JSON, their tenants included
        sent = {"data": {"sessions": [seed_session(s) for s in op.sessions]}, "process": op.process}
    idempotent = route.idempotent and (route.unless is None or values[route.unless] is None)
    missing = route.missing
    on_missing = (lambda: missing[0]) if missing is not None else None
    if not route.in_query:
        return Call(route.method, path, _reader(spec), sent, idempotent=idempotent, on_missing=on_missing)
    params = {k: v for k, v in sent.items() if v is not None}
    if route.method == "GET" and "user_id" in values and values["user_id"] is None:
        params["all_tenants"] = True  # a listing of every tenant (administration)
    return Call(
        route.method, path, _reader(spec), params=params, idempotent=idempotent, on_missing=on_missing
    )


def _reader(spec: type[ops.Operation[Any]]) -> Callable[[Any], Any]:
    result, key = ops.result_of(spec), spec.ROUTE.key
    if result in (None, type(None)):  # the answer is an acknowledgement, not a value
        return lambda data: None
    if key is None:
        return lambda data: decode(result, data)
    return lambda data: decode(result, data[key])


def _encode(value: Any) -> Any:
    """An argument as JSON: records as objects (unset fields left out), enums by value."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _encode(v) for k, v in dataclasses.asdict(value).items() if v is not None}
    if isinstance(value, Mapping):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [_encode(v) for v in value]
    return value


def health() -> Call[dict[str, Any]]:
    """The server's health (not a facade method): version, store, embedder, pipeline lag."""
    return Call("GET", "/v1/health", lambda d: dict(d))


__all__ = ["Call", "call_of", "health"]
