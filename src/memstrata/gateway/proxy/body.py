"""A request body read once and written back with only what the injection changed re-encoded.

Agents resend whole transcripts (tool output, base64 images) every turn: decoding that and
encoding it again costs more than everything else the proxy does on the way (a 2.6 MB body:
3 ms to decode, 12 ms to encode). So the body is decoded once, noting where each top-level
member's value and each element of a top-level list sits in the client's text; ``write_body``
then writes every member and element the dialect left alone (the same object: dialects copy only
what they change) as the client's own text, and encodes only the rest: the changed message and
the system prompt. What was not touched reaches the upstream exactly as sent (number spellings,
escapes, key order).

A body that is not UTF-8 text (UTF-16, a BOM) is decoded by ``json.loads`` instead and written
back whole by ``json.dumps``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from json.decoder import WHITESPACE, JSONDecodeError, scanstring  # type: ignore[attr-defined]
from typing import Any

from memstrata.gateway.proxy.dialect import Body

_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the C scanner json.loads runs
Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Parsed:
    """The decoded body, and where its parts sit in ``text`` (empty when not known)."""

    body: Body
    text: str = ""
    members: dict[str, Span] = field(default_factory=dict)
    items: dict[int, tuple[Span, Any]] = field(default_factory=dict)  # id(element) -> (span, element)


def read_body(raw: bytes) -> Parsed | None:
    """The body as a JSON object, or None when it is not one."""
    try:
        return _positional(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, StopIteration):
        pass
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    return Parsed(body) if isinstance(body, dict) else None


def write_body(parsed: Parsed, out: Body) -> bytes:
    """``out`` (``parsed.body`` with some members replaced) as the bytes to send upstream."""
    if not parsed.text:
        return _fresh(out).encode("ascii")
    text, members, original = parsed.text, parsed.members, parsed.body
    parts = []
    for key, value in out.items():
        span = members.get(key)
        if span is not None and original.get(key) is value:
            written = text[span[0] : span[1]]
        elif isinstance(value, list) and isinstance(original.get(key), list):
            written = "[" + ",".join(_element(parsed, v) for v in value) + "]"
        else:
            written = _fresh(value)
        parts.append(f"{_fresh(key)}:{written}")
    return ("{" + ",".join(parts) + "}").encode("utf-8")


def _element(parsed: Parsed, value: Any) -> str:
    found = parsed.items.get(id(value))
    if found is not None and found[1] is value:
        start, end = found[0]
        return parsed.text[start:end]
    return _fresh(value)


def _fresh(value: Any) -> str:
    # ASCII escapes: a lone surrogate the client sent escaped stays an escape, never bad UTF-8.
    return json.dumps(value, ensure_ascii=True)


def _positional(text: str) -> Parsed:
    """``json.loads(text)`` for an object, noting the spans (raises ValueError or StopIteration
    where ``json.loads`` would raise)."""
    at = _skip(text, 0)
    if text[at : at + 1] != "{":
        raise ValueError("not an object")
    body: Body = {}
    members: dict[str, Span] = {}
    items: dict[int, tuple[Span, Any]] = {}
    at = _skip(text, at + 1)
    if text[at : at + 1] == "}":
        return _ended(text, at + 1, body, members, items)
    while True:
        if text[at : at + 1] != '"':
            raise ValueError("expected a member name")
        key, at = scanstring(text, at + 1)
        at = _skip(text, at)
        if text[at : at + 1] != ":":
            raise ValueError("expected ':'")
        start = _skip(text, at + 1)
        if text[start : start + 1] == "[":
            value, at = _array(text, start, items)
        else:
            value, at = _SCAN(text, start)
        body[key], members[key] = value, (start, at)
        at = _skip(text, at)
        sep = text[at : at + 1]
        if sep == "}":
            return _ended(text, at + 1, body, members, items)
        if sep != ",":
            raise ValueError("expected ',' or '}'")
        at = _skip(text, at + 1)


def _array(text: str, at: int, items: dict[int, tuple[Span, Any]]) -> tuple[list[Any], int]:
    out: list[Any] = []
    at = _skip(text, at + 1)
    if text[at : at + 1] == "]":
        return out, at + 1
    while True:
        start = at
        value, at = _SCAN(text, start)
        out.append(value)
        items[id(value)] = ((start, at), value)
        at = _skip(text, at)
        sep = text[at : at + 1]
        if sep == "]":
            return out, at + 1
        if sep != ",":
            raise ValueError("expected ',' or ']'")
        at = _skip(text, at + 1)


def _ended(
    text: str, at: int, body: Body, members: dict[str, Span], items: dict[int, tuple[Span, Any]]
) -> Parsed:
    if _skip(text, at) != len(text):
        raise JSONDecodeError("Extra data", text, at)
    return Parsed(body, text, members, items)


def _skip(text: str, at: int) -> int:
    return int(WHITESPACE.match(text, at).end())
