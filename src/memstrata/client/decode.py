"""JSON back into the library's records, validated by pydantic against the result type the
operation declares (``Atom``, ``SearchResult``, ``list[Message]``, ...), so the client returns
exactly what the library returns. Fields the server adds that this version does not know are
ignored (an older client keeps working against a newer server); a missing field or a value of the
wrong type is a ``RemoteError`` naming where it was."""

from __future__ import annotations

import functools
from typing import Any

from pydantic import TypeAdapter, ValidationError

from memstrata.errors import RemoteError


@functools.cache
def _adapter(tp: Any) -> TypeAdapter[Any]:
    return TypeAdapter(tp)


def decode(tp: Any, data: Any) -> Any:
    """``data`` (parsed JSON) as a value of type ``tp``. Raises ``RemoteError`` when the server's
    answer does not have the expected shape."""
    try:
        return _adapter(tp).validate_python(data)
    except ValidationError as exc:
        where = ", ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'the answer'}: {e['msg']}" for e in exc.errors()[:3]
        )
        raise RemoteError(f"unexpected answer from the server: {where}") from exc
