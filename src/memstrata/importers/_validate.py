"""Small typed readers for JSON values that raise ``InputError`` naming the exact item."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memstrata.errors import InputError


def type_name(value: object) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def as_list(value: object, item: str) -> list[Any]:
    """``value`` if it is a JSON array."""
    if not isinstance(value, list):
        raise InputError(f"expected an array, got {type_name(value)}", item=item)
    return value


def as_object(value: object, item: str) -> Mapping[str, Any]:
    """``value`` if it is a JSON object."""
    if not isinstance(value, dict):
        raise InputError(f"expected an object, got {type_name(value)}", item=item)
    return value


def required_str(obj: Mapping[str, Any], key: str, item: str, *, allow_empty: bool = False) -> str:
    """``obj[key]`` as a string; missing, non-string or (unless allowed) empty is an error."""
    path = f"{item}.{key}"
    if key not in obj:
        raise InputError("is required", item=path)
    value = obj[key]
    if not isinstance(value, str):
        raise InputError(f"expected a string, got {type_name(value)}", item=path)
    if not allow_empty and not value.strip():
        raise InputError("must not be empty", item=path)
    return value


def optional_str(obj: Mapping[str, Any], key: str, item: str) -> str | None:
    """``obj[key]`` as a non-empty string, or None when absent or null."""
    if obj.get(key) is None:
        return None
    return required_str(obj, key, item)
