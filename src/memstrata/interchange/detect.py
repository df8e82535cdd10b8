"""Recognise an import document's format and parse it."""

from __future__ import annotations

from typing import Literal

from memstrata.errors import InputError
from memstrata.interchange.locomo import parse_locomo
from memstrata.interchange.seed import parse_seed
from memstrata.interchange.sessions import ImportSession

Format = Literal["seed", "locomo"]
FORMATS: tuple[Format, ...] = ("seed", "locomo")


def detect_format(data: object) -> Format:
    """``locomo`` for a list whose first item has ``sample_id`` and ``conversation``; else ``seed``.

    Only the first item decides, so a broken later item gets the parser's precise error rather
    than a confusing format guess.
    """
    if isinstance(data, list) and data:
        first = data[0]
        if isinstance(first, dict) and "sample_id" in first and "conversation" in first:
            return "locomo"
    return "seed"


def parse_import(data: object, fmt: str | None = None) -> list[ImportSession]:
    """Parse ``data`` (already decoded JSON) in format ``fmt``, detected when None or ``auto``.

    Raises ``InputError`` for an unknown format or a malformed item.
    """
    chosen = detect_format(data) if fmt in (None, "auto") else fmt
    if chosen == "seed":
        return parse_seed(data)
    if chosen == "locomo":
        return parse_locomo(data)
    raise InputError(f"unknown import format {fmt!r}; expected one of: auto, {', '.join(FORMATS)}")
