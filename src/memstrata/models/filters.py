"""Metadata filters: which records a search, recall or listing keeps by their ``metadata`` object.

A caller writes a mapping (mem0's ``filters``): ``{"app": "crm"}`` keeps records whose metadata
has ``app`` equal to ``"crm"``; ``{"app": {"in": ["crm", "erp"]}}`` keeps those whose ``app`` is
one of the values. Several keys must all match. Equality is by JSON type and value: ``1`` matches
``1`` and ``1.0`` but neither ``"1"`` nor ``true``; a record without the key never matches.

``metadata_filter`` parses and checks the mapping (an ``InputError`` naming the bad part); the
stores turn a ``MetadataFilter`` into conditions of their own queries (``stores/sql.py``), so a
top-K is taken among the matching records only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memstrata.errors import InputError

Scalar = str | int | float | bool
KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")  # identifier-like: safe inside a JSON path
MAX_KEYS = 20
MAX_VALUES = 100  # per ``in``
MAX_TEXT = 512  # characters of a string value
_INT_LIMIT = 2**63  # the stores keep 64-bit integers
OPERATORS = ("in",)


@dataclass(frozen=True, slots=True)
class MetadataCondition:
    """``metadata[key]`` equals one of ``values``."""

    key: str
    values: tuple[Scalar, ...]


@dataclass(frozen=True, slots=True)
class MetadataFilter:
    """Conditions on a record's metadata, all of which must hold (none: every record passes)."""

    conditions: tuple[MetadataCondition, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.conditions)

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        """Whether ``metadata`` passes: the meaning the stores' queries implement."""
        return all(
            c.key in metadata and any(same(metadata[c.key], v) for v in c.values) for c in self.conditions
        )


NO_FILTER = MetadataFilter()


def same(stored: object, wanted: Scalar) -> bool:
    """JSON equality of a stored value and a filter value: booleans, numbers and strings apart."""
    if isinstance(wanted, bool) or isinstance(stored, bool):
        return isinstance(stored, bool) and isinstance(wanted, bool) and stored == wanted
    if isinstance(wanted, str) or isinstance(stored, str):
        return isinstance(stored, str) and isinstance(wanted, str) and stored == wanted
    return isinstance(stored, int | float) and stored == wanted


def metadata_filter(value: object, item: str = "filters") -> MetadataFilter:
    """The filter a caller's mapping describes (None: no filter). Raises ``InputError``."""
    if value is None:
        return NO_FILTER
    if not isinstance(value, Mapping):
        raise InputError(f"must be an object of metadata keys, got {type(value).__name__}", item=item)
    if len(value) > MAX_KEYS:
        raise InputError(f"at most {MAX_KEYS} keys, got {len(value)}", item=item)
    conditions = []
    for key, wanted in value.items():
        if not isinstance(key, str) or not KEY.fullmatch(key):
            raise InputError(
                f"a key must be a letter or _ then letters, digits, _ or - (at most 64), got {key!r}",
                item=item,
            )
        conditions.append(MetadataCondition(key, _values(wanted, f"{item}.{key}")))
    return MetadataFilter(tuple(conditions))


def _values(wanted: object, item: str) -> tuple[Scalar, ...]:
    if isinstance(wanted, Mapping):
        if len(wanted) != 1 or next(iter(wanted)) not in OPERATORS:
            ops = ", ".join(map(repr, wanted)) or "none"
            raise InputError(f"unknown operator {ops}: use a value, or {{'in': [values]}}", item=item)
        listed = wanted["in"]
        if not isinstance(listed, Sequence) or isinstance(listed, str | bytes):
            raise InputError(f"'in' takes an array of values, got {type(listed).__name__}", item=f"{item}.in")
        if not 1 <= len(listed) <= MAX_VALUES:
            raise InputError(f"'in' takes 1 to {MAX_VALUES} values, got {len(listed)}", item=f"{item}.in")
        scalars = [_scalar(v, f"{item}.in[{i}]") for i, v in enumerate(listed)]
        # Repeats dropped; ``True == 1`` in Python, so a value's kind is part of its key.
        return tuple({(isinstance(v, bool), v): v for v in scalars}.values())
    return (_scalar(wanted, item),)


def _scalar(value: object, item: str) -> Scalar:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -_INT_LIMIT <= value < _INT_LIMIT:
            raise InputError("an integer must fit in 64 bits", item=item)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError("a number must be finite", item=item)
        return value
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise InputError(f"a string value has at most {MAX_TEXT} characters", item=item)
        if "\x00" in value or not _encodable(value):
            raise InputError("a string value must be valid text without NUL", item=item)
        return value
    shown = "null" if value is None else type(value).__name__
    raise InputError(f"a value must be a string, number or boolean, got {shown}", item=item)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
