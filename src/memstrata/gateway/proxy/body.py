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
    pieces: list[str] = []  # joined once at the end: a large transcript is copied once
    for n, (key, value) in enumerate(out.items()):
        pieces += ("," if n else "{", _fresh(key), ":")
        span = members.get(key)
        if span is not None and original.get(key) is value:
            pieces.append(text[span[0] : span[1]])
        elif isinstance(value, list) and isinstance(was := original.get(key), list):
            shift = len(value) - len(was)  # elements inserted before (a system message first)
            for i, v in enumerate(value):
                pieces.append("," if i else "[")
                _element(parsed, v, was, i - shift, pieces)
            pieces.append("]" if value else "[]")
        else:
            pieces.append(_fresh(value))
    pieces.append("}" if out else "{}")
    return "".join(pieces).encode("utf-8")


def _element(parsed: Parsed, value: Any, was: list[Any], at: int, pieces: list[str]) -> None:
    found = parsed.items.get(id(value))
    if found is not None and found[1] is value:
        pieces.append(parsed.text[found[0][0] : found[0][1]])
        return
    source = was[at] if 0 <= at < len(was) else None
    if isinstance(value, dict) and isinstance(source, dict) and _copy_of(value, source):
        _copied(parsed, value, source, pieces)
    else:
        pieces.append(_fresh(value))


def _copy_of(value: Body, source: Body) -> bool:
    """Whether ``value`` is ``source`` copied with one member replaced (what dialects do)."""
    return value.keys() == source.keys() and sum(value[k] is not v for k, v in source.items()) <= 1


def _copied(parsed: Parsed, value: Body, source: Body, pieces: list[str]) -> None:
    """A copy of an element with one member replaced (the message the memories went into):
    the members it shares with ``source``, and the shared parts of a list member (the images
    beside the new text part), in the client's text; only the rest encoded."""
    found = parsed.items.get(id(source))
    if found is None:
        pieces.append(_fresh(value))
        return
    text = parsed.text
    spans = _member_spans(text, found[0][0])
    for n, (key, member) in enumerate(value.items()):
        pieces += ("," if n else "{", _fresh(key), ":")
        found_span, was = spans.get(key), source.get(key)
        span, elements = found_span if found_span is not None else (None, None)
        if span is not None and was is member:
            pieces.append(text[span[0] : span[1]])
        elif elements is not None and isinstance(member, list) and isinstance(was, list):
            inner = dict(zip(map(id, was), zip(elements, was, strict=True), strict=True))
            for i, m in enumerate(member):
                pieces.append("," if i else "[")
                got = inner.get(id(m))
                pieces.append(text[got[0][0] : got[0][1]] if got is not None and got[1] is m else _fresh(m))
            pieces.append("]" if member else "[]")
        else:
            pieces.append(_fresh(member))
    pieces.append("}" if value else "{}")


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
    text: str,
    at: int,
    body: Body,
    members: dict[str, Span],
    items: dict[int, tuple[Span, Any]],
) -> Parsed:
    if _skip(text, at) != len(text):
        raise JSONDecodeError("Extra data", text, at)
    return Parsed(body, text, members, items)


def _member_spans(text: str, at: int) -> dict[str, tuple[Span, list[Span] | None]]:
    """Where each member's value of the object at ``at`` (read once already) sits, and for an
    array its elements (so the array is not scanned twice)."""
    spans: dict[str, tuple[Span, list[Span] | None]] = {}
    at = _skip(text, at + 1)
    while text[at : at + 1] == '"':
        key, at = scanstring(text, at + 1)
        start = _skip(text, _skip(text, at) + 1)
        elements = None
        if text[start : start + 1] == "[":
            elements, at = _element_spans(text, start)
        else:
            _, at = _SCAN(text, start)
        spans[key] = ((start, at), elements)
        at = _skip(text, at)
        at = _skip(text, at + 1) if text[at : at + 1] == "," else at
    return spans


def _element_spans(text: str, at: int) -> tuple[list[Span], int]:
    """Where each element of the array at ``at`` sits, and where the array ends."""
    spans: list[Span] = []
    at = _skip(text, at + 1)
    while text[at : at + 1] not in ("]", ""):
        start = at
        _, at = _SCAN(text, start)
        spans.append((start, at))
        at = _skip(text, at)
        at = _skip(text, at + 1) if text[at : at + 1] == "," else at
    return spans, at + 1


def _skip(text: str, at: int) -> int:
    return int(WHITESPACE.match(text, at).end())
