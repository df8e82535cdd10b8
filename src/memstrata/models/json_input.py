"""JSON from outside (an import file, a history line, an agent's tool arguments) decoded with one
error for every way it can fail: ``InputError``, one line, never a traceback.

Nesting is limited: the decoder recurses once per level and raises ``RecursionError`` near 1000
levels, and a value nested a few hundred levels deep would break any later recursive step (a JSON
encoder, a validator). No input memstrata reads needs more than a handful of levels.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
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


MAX_OBJECT_BYTES = 16_384  # custom metadata of one record, as JSON
MAX_OBJECT_DEPTH = 10


def json_object(value: object, what: str, *, max_bytes: int = MAX_OBJECT_BYTES) -> dict[str, Any]:
    """``value`` as custom metadata: a JSON object (None: an empty one) with string keys, values
    JSON can hold (finite numbers), nesting at most ``MAX_OBJECT_DEPTH`` levels and at most
    ``max_bytes`` bytes as JSON. Raises ``InputError`` (its ``item``: ``what``)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"must be a JSON object, got {type(value).__name__}", item=what)
    if not all(isinstance(k, str) for k in value):
        raise InputError("keys must be strings", item=what)
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        size = len(text.encode("utf-8"))
    except RecursionError:
        raise InputError(f"nests more than {MAX_OBJECT_DEPTH} levels deep", item=what) from None
    except UnicodeEncodeError:
        raise InputError("must hold valid text (no lone surrogates)", item=what) from None
    except (TypeError, ValueError) as exc:
        raise InputError(f"must be JSON: {exc}", item=what) from None
    if size > max_bytes:
        raise InputError(f"must be at most {max_bytes} bytes as JSON, got {size}", item=what)
    if depth_exceeds(value, MAX_OBJECT_DEPTH):
        raise InputError(f"nests more than {MAX_OBJECT_DEPTH} levels deep", item=what)
    return json.loads(text)  # type: ignore[no-any-return]  # a plain copy: tuples become lists
