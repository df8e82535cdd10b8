"""Tolerant JSON out of model replies, strict validation after.

Models wrap JSON in code fences or prose, leave trailing commas and put raw newlines inside
strings. ``parse_json`` forgives all of that; ``validate_items`` then checks each item against a
pydantic model and drops (and logs) the ones that do not fit, so one bad item costs only itself.
A reply cut off at ``max_tokens`` ends inside its JSON: ``close_cut`` keeps what it completed.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any, TypeVar

import pydantic

from memstrata.errors import ParseError
from memstrata.models import Degradations

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=pydantic.BaseModel)

_FENCE = re.compile(r"```[ \t]*(?:json[c5]?)?[ \t]*\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_CLOSERS = {"[": "]", "{": "}"}
_NON_SPACE = re.compile(r"\S")
_MAX_OPENERS = 50  # bracket positions tried in prose before giving up (bounds the work)


def parse_json(text: str) -> Any:
    """The first JSON value found in ``text``.

    Tries, in order: the whole text, the inside of each code fence (```json too), then each
    balanced ``[...]`` or ``{...}`` span in the prose. Trailing commas are removed and raw control
    characters inside strings are accepted as literal characters. Raises ``ParseError`` (carrying
    the reply) when nothing parses.
    """
    for candidate in _candidates(text):
        try:
            return json.loads(_drop_trailing_commas(candidate), strict=False)
        except (ValueError, RecursionError):  # RecursionError: nested about 1000 levels deep
            continue
    raise ParseError(f"no JSON value in the model's reply ({len(text)} chars)", reply=text)


def close_cut(text: str) -> str | None:
    """The JSON of a reply cut off mid-value, up to the last bracket it closed, with the brackets
    still open closed after it (``{"a": [{"b": 1}, {"b`` becomes ``{"a": [{"b": 1}]}``).

    Returns the text whole when its first value is complete, and None when it holds no bracket
    or closed none inside the first value (nothing complete to keep)."""
    start = next((i for i, char in enumerate(text) if char in _CLOSERS), None)
    if start is None:
        return None
    kept: str | None = None
    for position, still_open in _closings(text, start):
        if still_open is None:
            return kept  # mismatched: keep what closed before it
        if not still_open:
            return text[start : position + 1]
        kept = text[start : position + 1] + "".join(reversed(still_open))
    return kept


def as_list(data: Any, key: str, *, reply: str) -> list[Any]:
    """The list a reply carries: ``data`` itself, ``data[key]``, or an object's only list value.

    JSON mode makes models answer with an object, so a requested array often arrives wrapped.
    Raises ``ParseError`` when there is no such list.
    """
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        if isinstance(data.get(key), list):
            return list(data[key])
        lists = [value for value in data.values() if isinstance(value, list)]
        if len(lists) == 1:
            return list(lists[0])
    raise ParseError(
        f"expected a JSON array or an object with {key!r}, got {type(data).__name__}", reply=reply
    )


def validate_items(
    items: Iterable[Any], model: type[M], *, what: str, counts: Degradations | None = None
) -> list[M]:
    """Each item validated as ``model``; invalid items are dropped, logged in one warning and
    counted in ``counts`` as ``dropped_items`` (one bad item costs only itself)."""
    valid: list[M] = []
    problems: list[str] = []
    for position, item in enumerate(items):
        try:
            valid.append(model.model_validate(item))
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "item"
            problems.append(f"#{position} {where}: {first['msg']}")
    if problems:
        if counts is not None:
            counts.add("dropped_items", len(problems))
        logger.warning(
            "dropped %d of %d %s from the model's reply: %s",
            len(problems),
            len(problems) + len(valid),
            what,
            "; ".join(problems[:5]),
        )
    return valid


def field_guide(model: type[pydantic.BaseModel]) -> str:
    """One ``- name: description`` line per field, so field descriptions double as instructions."""
    return "\n".join(
        f"- {name}: {info.description}" for name, info in model.model_fields.items() if info.description
    )


def _candidates(text: str) -> Iterator[str]:
    yield text.strip()
    sources = [match.group(1) for match in _FENCE.finditer(text)]
    for fenced in sources:
        yield fenced.strip()
    for source in [*sources, text]:
        openers = (i for i, char in enumerate(source) if char in _CLOSERS)
        for start in islice(openers, _MAX_OPENERS):
            span = _balanced_span(source, start)
            if span is not None:
                yield span


def _scan(text: str, start: int = 0) -> Iterator[tuple[int, str, bool]]:
    """``(position, char, inside a JSON string)`` from ``start``; quotes count as inside."""
    in_string = escaped = False
    for position in range(start, len(text)):
        char = text[position]
        if not in_string:
            in_string = char == '"'
            yield position, char, in_string
            continue
        yield position, char, True
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            in_string = False


def _balanced_span(text: str, start: int) -> str | None:
    """``text[start:end]`` where the bracket at ``start`` closes (string-aware), or None."""
    for position, still_open in _closings(text, start):
        if not still_open:  # None (mismatched) or empty (the first bracket closed)
            return None if still_open is None else text[start : position + 1]
    return None


def _closings(text: str, start: int) -> Iterator[tuple[int, list[str] | None]]:
    """Each closing bracket outside strings from ``start`` on, with the closers of the brackets
    still open after it (innermost last); None, and the end, at a bracket that closes nothing."""
    stack: list[str] = []
    for position, char, in_string in _scan(text, start):
        if in_string:
            continue
        if char in _CLOSERS:
            stack.append(_CLOSERS[char])
        elif char in "]}":
            if not stack or stack.pop() != char:
                yield position, None
                return
            yield position, stack
            if not stack:
                return
    return None


def _drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``]`` or ``}`` (outside strings)."""
    out: list[str] = []
    for position, char, in_string in _scan(text):
        if not in_string and char == ",":
            following = _NON_SPACE.search(text, position + 1)
            if following is not None and following.group() in ("]", "}"):
                continue
        out.append(char)
    return "".join(out)
