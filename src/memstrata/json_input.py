"""JSON from outside (an import file, a history line, an agent's tool arguments) decoded with one
error for every way it can fail: ``InputError``, one line, never a traceback.

Nesting is limited: the decoder recurses once per level and raises ``RecursionError`` near 1000
levels, and a value nested a few hundred levels deep would break any later recursive step (a JSON
encoder, a validator). No input memstrata reads needs more than a handful of levels.
"""

from __future__ import annotations

import json
from typing import Any

from memstrata.errors import InputError

MAX_DEPTH = 100


def loads(text: str | bytes, what: str | None = None) -> Any:
    """The value of JSON ``text`` (bytes: UTF-8, -16 or -32). Raises ``InputError`` (its ``item``:
    ``what``) when it is not valid JSON or nests arrays and objects more than ``MAX_DEPTH`` deep."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise _too_deep(what) from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise InputError(f"not valid JSON: {exc}", item=what) from None
    if depth_exceeds(value, MAX_DEPTH):
        raise _too_deep(what)
    return value


def _too_deep(what: str | None) -> InputError:
    return InputError(f"arrays and objects nest more than {MAX_DEPTH} levels deep", item=what)


def depth_exceeds(value: object, limit: int) -> bool:
    """Whether arrays and objects nest deeper than ``limit`` in ``value`` (without recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if level > limit:
            return True
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return False
