"""Input checked by pydantic models and reported as memstrata's ``InputError``: one error, the first
pydantic found, naming the exact item (``sessions[2].conversations[0][1].role``, ``[0].sample_id``,
``limit``) in words a caller reads without knowing pydantic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from memstrata.errors import InputError

T = TypeVar("T")

# What a JSON type is called in messages, by pydantic's error type.
_EXPECTED = {
    "string_type": "a string",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
}


class Record(BaseModel):
    """Base of the input models: immutable; fields the model does not name are ignored."""

    model_config = ConfigDict(frozen=True, extra="ignore")


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


NonBlank = Annotated[str, AfterValidator(_not_blank)]


def check(adapter: TypeAdapter[T], value: object, prefix: str = "") -> T:
    """``value`` validated by ``adapter``; raises ``InputError`` whose item starts with ``prefix``."""
    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        raise input_error(exc, prefix) from None


def input_error(exc: ValidationError, prefix: str = "") -> InputError:
    """The first of ``exc``'s errors as an ``InputError`` (the item is None for the whole value)."""
    first = exc.errors(include_url=False)[0]
    return InputError(message(first), item=item_path(first["loc"], prefix) or None)


def item_path(loc: Sequence[int | str], prefix: str = "") -> str:
    """``("sessions", 2, "role")`` -> ``sessions[2].role``, appended to ``prefix``."""
    out = prefix
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else part
    return out


def message(error: ErrorDetails) -> str:
    kind, value = error["type"], error.get("input")
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "is not a known field"
    if kind == "literal_error":
        return f"must be {ctx['expected']}, got {value!r}"
    if kind in ("value_error", "assertion_error") and "error" in ctx:
        return str(ctx["error"])
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, got {type_name(value)}"
    return str(error["msg"])


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
