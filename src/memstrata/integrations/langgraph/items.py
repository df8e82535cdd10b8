"""How a LangGraph store item lives in memstrata, and the store's matching rules (pure logic).

An item is one pinned L1 atom of a tenant. Its namespace picks the tenant: the label at
``user_index`` (default 1, so ``("memories", "alice")`` is user ``alice``) is the user id, the
store's ``agent_id`` the agent; a namespace too short for that belongs to ``default_user``. The
whole namespace, the key and the value are kept verbatim in the atom's metadata under
``langgraph`` (JSON values round-trip exactly), and the atom's text (what search ranks) is the
namespace, the key and the value's text, so two keys holding equal values are two atoms (notes
are deduplicated by text)."""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from langgraph.store.base import Item, MatchCondition, SearchItem

from memstrata.errors import InputError
from memstrata.models import Atom

MARK = "langgraph"
_TEXT_LIMIT = 19_000  # a note holds at most 20 000 characters; the label and key come first


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a namespace's items live: the tenant, from the namespace (see the module doc)."""

    user_index: int
    default_user: str
    agent_id: str

    def user(self, namespace: tuple[str, ...]) -> str:
        return namespace[self.user_index] if len(namespace) > self.user_index else self.default_user

    def users(self, prefix: tuple[str, ...]) -> str | None:
        """The one user a namespace prefix lies in, or None when it spans several."""
        return prefix[self.user_index] if len(prefix) > self.user_index else None


@dataclass(frozen=True, slots=True)
class Stored:
    """One item as read from its atom."""

    atom: Atom
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: int
    ttl_minutes: float | None

    def item(self) -> Item:
        return Item(
            value=self.value,
            key=self.key,
            namespace=self.namespace,
            created_at=_when(self.created_at),
            updated_at=_when(self.atom.updated_at),
        )

    def hit(self, score: float | None) -> SearchItem:
        return SearchItem(
            self.namespace, self.key, self.value, _when(self.created_at), _when(self.atom.updated_at), score
        )


def stored(atom: Atom) -> Stored | None:
    """The item an atom holds, or None for an atom this store did not write."""
    mark = atom.metadata.get(MARK)
    if not isinstance(mark, Mapping):
        return None
    ttl = mark.get("ttl")
    return Stored(
        atom,
        tuple(mark["namespace"]),
        str(mark["key"]),
        dict(mark["value"]),
        int(mark.get("created_at", atom.created_at)),
        float(ttl) if ttl is not None else None,
    )


def metadata(
    namespace: tuple[str, ...], key: str, value: Mapping[str, Any], created_at: int, ttl: float | None
) -> dict[str, Any]:
    """The atom metadata that keeps an item verbatim."""
    mark = {"namespace": list(namespace), "key": key, "value": dict(value), "created_at": created_at}
    return {MARK: {**mark, "ttl": ttl}}


def note(namespace: tuple[str, ...], key: str, value: Mapping[str, Any], index: list[str] | None) -> str:
    """The atom's text: the namespace (labels quoted, so ``("a/b",)`` and ``("a", "b")`` differ),
    the key and the text of the value (or of the fields ``index`` names)."""
    where = "/".join(quote(label, safe=" ") for label in namespace)
    fields = [_field(value, path) for path in index] if index else [value]
    body = " ".join(t for f in fields for t in _texts(f))
    return f"{where} · {key}: {body}"[:_TEXT_LIMIT]


def _field(value: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path (``[*]`` and ``[n]`` read lists), None where it is missing."""
    found: list[Any] = [value]
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        nxt: list[Any] = []
        for v in found:
            if part == "[*]" and isinstance(v, list):
                nxt.extend(v)
            elif part.startswith("[") and isinstance(v, list):
                i = int(part[1:-1])
                if -len(v) <= i < len(v):
                    nxt.append(v[i])
            elif isinstance(v, Mapping) and part in v:
                nxt.append(v[part])
        found = nxt
    return found


def _texts(value: Any) -> list[str]:
    """The words of a JSON value: its strings and numbers, keys of objects included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [t for k, v in value.items() for t in [str(k), *_texts(v)]]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _texts(v)]
    return [] if value is None else [json.dumps(value)]


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def matches(value: Mapping[str, Any], wanted: Mapping[str, Any] | None) -> bool:
    """Whether an item's value passes a ``SearchOp.filter``: each key equals the given value, or
    passes every ``$eq``/``$ne``/``$gt``/``$gte``/``$lt``/``$lte`` of an operator object."""
    for k, cond in (wanted or {}).items():
        actual = value.get(k)
        if isinstance(cond, Mapping) and cond and all(str(o).startswith("$") for o in cond):
            for o, operand in cond.items():
                test = _OPERATORS.get(o)
                if test is None:
                    raise InputError(f"unknown filter operator {o!r}", item="filter")
                if not _compare(test, actual, operand):
                    return False
        elif actual != cond:
            return False
    return True


def _compare(test: Callable[[Any, Any], bool], actual: Any, operand: Any) -> bool:
    if actual is None and test not in (operator.eq, operator.ne):
        return False  # a missing field is neither above nor below anything
    try:
        return test(actual, operand)
    except TypeError:  # values of kinds that do not order (a string against a number)
        return False


def in_prefix(namespace: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    return namespace[: len(prefix)] == prefix


def namespace_matches(namespace: tuple[str, ...], conditions: tuple[MatchCondition, ...] | None) -> bool:
    """Whether a namespace passes every prefix/suffix condition (``*`` matches any one label)."""
    for cond in conditions or ():
        path = tuple(cond.path)
        if len(path) > len(namespace):
            return False
        part = (
            namespace[: len(path)] if cond.match_type == "prefix" else namespace[len(namespace) - len(path) :]
        )
        if not all(p in ("*", n) for p, n in zip(path, part, strict=True)):
            return False
    return True


def _when(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)
