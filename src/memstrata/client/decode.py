"""JSON back into the library's records: one generic decoder driven by the dataclasses' own type
hints, so the client returns exactly what the library returns (``Atom``, ``SearchResult``, ...)."""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

from memstrata.errors import RemoteError

T = TypeVar("T")


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def decode(tp: Any, data: Any) -> Any:
    """``data`` (parsed JSON) as a value of type ``tp``. Raises ``RemoteError`` when the server's
    answer does not have the expected shape."""
    try:
        return _decode(tp, data)
    except (TypeError, ValueError, KeyError) as exc:
        raise RemoteError(f"unexpected answer from the server: {exc}") from exc


def record(cls: type[T], data: Any) -> T:
    return cast(T, decode(cls, data))


def _decode(tp: Any, data: Any) -> Any:
    if tp is Any or tp is object:
        return data
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if data is None and type(None) in args:
            return None
        return _decode(next(a for a in args if a is not type(None)), data)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(data, Mapping):
            raise TypeError(f"{tp.__name__} expected an object, got {type(data).__name__}")
        hints = _hints(tp)
        fields = {f.name for f in dataclasses.fields(tp) if f.init}
        return tp(**{k: _decode(hints[k], v) for k, v in data.items() if k in fields})
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(data)
    if origin in (tuple, list, Sequence) or tp in (tuple, list):
        args = typing.get_args(tp)
        item = args[0] if args else Any
        values = [_decode(item, v) for v in data]
        return tuple(values) if origin is tuple or tp is tuple else values
    if origin in (dict, Mapping):
        _, value = typing.get_args(tp) or (Any, Any)
        return {str(k): _decode(value, v) for k, v in data.items()}
    if tp is float and isinstance(data, int):
        return float(data)
    return data
