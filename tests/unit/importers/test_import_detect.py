"""detect_format and parse_import: the right parser for each document."""

from __future__ import annotations

from typing import Any

import pytest

from memstrata.errors import InputError
from memstrata.interchange import detect_format, parse_import
from memstrata.models import Tenant

LOCOMO: list[dict[str, Any]] = [
    {
        "sample_id": "conv-1",
        "conversation": {
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "Hi"}],
        },
    }
]
SEED_A: dict[str, Any] = {
    "sessions": [{"sessionKey": "s", "conversations": [[{"role": "user", "content": "Hi"}]]}]
}
SEED_B: list[dict[str, Any]] = SEED_A["sessions"]


@pytest.mark.parametrize(
    ("data", "fmt"),
    [(LOCOMO, "locomo"), (SEED_A, "seed"), (SEED_B, "seed"), ([], "seed"), ({}, "seed"), ("x", "seed")],
)
def test_detect_format(data: object, fmt: str) -> None:
    assert detect_format(data) == fmt


def test_parse_import_detects() -> None:
    assert parse_import(LOCOMO)[0].tenant == Tenant(user_id="conv-1")
    assert parse_import(SEED_A, "auto")[0].session_key == "s"
    assert parse_import(SEED_B)[0].session_key == "s"


def test_parse_import_with_an_explicit_format() -> None:
    assert parse_import(SEED_B, "seed")[0].tenant == Tenant()
    # Forcing the wrong parser reports the items it cannot read.
    with pytest.raises(InputError) as info:
        parse_import(LOCOMO, "seed")
    assert info.value.item == "[0].sessionKey"


def test_unknown_format() -> None:
    with pytest.raises(InputError, match="unknown import format 'csv'"):
        parse_import(SEED_A, "csv")
