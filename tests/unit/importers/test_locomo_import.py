"""parse_locomo on an inline sample and on the shared LoCoMo dev set."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memstrata.errors import InputError
from memstrata.interchange import parse_locomo
from memstrata.interchange.locomo import parse_date_time
from memstrata.models import Role, Tenant

DEV_SET = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "locomo" / "locomo-dev.json"


def ms(year: int, month: int, day: int, hour: int, minute: int) -> int:
    return int(datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp() * 1000)


def sample() -> list[dict[str, Any]]:
    return [
        {
            "sample_id": "conv-x",
            "conversation": {
                "speaker_a": "Ana",
                "speaker_b": "Ben",
                "session_10_date_time": "9:05 am on 2 January, 2024",
                "session_10": [{"speaker": "Ana", "dia_id": "D10:1", "text": "Happy new year!"}],
                "session_2_date_time": "1:56 pm on 8 May, 2023",
                "session_2": [
                    {"speaker": "Ana", "dia_id": "D2:1", "text": "I adopted a dog."},
                    {
                        "speaker": "Ben",
                        "dia_id": "D2:2",
                        "text": "Cute!",
                        "blip_caption": "a photo of a puppy on a sofa",
                        "img_url": ["https://example.com/x.jpg"],
                    },
                    {"speaker": "Ana", "dia_id": "D2:3", "text": "Her name is Luna."},
                ],
                "session_1_date_time": "12:00 am on 1 May, 2023",
                "session_1": [{"speaker": "Ben", "dia_id": "D1:1", "text": "Hi Ana"}],
                "session_3_date_time": "4:00 pm on 9 May, 2023",  # a date without a session: ignored
            },
            "qa": [],
        },
        {
            "sample_id": "conv-y",
            "conversation": {
                "session_1_date_time": "12:30 pm on 3 March, 2022",
                "session_1": [{"speaker": "Cy", "dia_id": "D1:1", "text": "Hello"}],
            },
        },
    ]


def test_sessions_in_numeric_order_one_tenant_per_sample() -> None:
    sessions = parse_locomo(sample())
    assert [(s.tenant, s.session_key) for s in sessions] == [
        (Tenant(user_id="conv-x"), "session_1"),
        (Tenant(user_id="conv-x"), "session_2"),
        (Tenant(user_id="conv-x"), "session_10"),
        (Tenant(user_id="conv-y"), "session_1"),
    ]
    assert all(s.session_id == s.session_key for s in sessions)


def test_turns_become_named_user_messages_with_ids_and_captions() -> None:
    session_2 = parse_locomo(sample())[1]
    assert [m.id for m in session_2.messages] == ["conv-x/D2:1", "conv-x/D2:2", "conv-x/D2:3"]
    assert [m.name for m in session_2.messages] == ["Ana", "Ben", "Ana"]
    assert all(m.role == Role.USER for m in session_2.messages)
    assert session_2.messages[0].content == "I adopted a dog."
    assert session_2.messages[1].content == "Cute! [shares a photo: a photo of a puppy on a sofa]"


def test_timestamps_start_at_the_session_time_and_step_5_seconds() -> None:
    sessions = parse_locomo(sample())
    start = ms(2023, 5, 8, 13, 56)
    assert [m.timestamp for m in sessions[1].messages] == [start, start + 5000, start + 10000]
    assert sessions[0].messages[0].timestamp == ms(2023, 5, 1, 0, 0)  # 12 am is midnight
    assert sessions[2].messages[0].timestamp == ms(2024, 1, 2, 9, 5)
    assert sessions[3].messages[0].timestamp == ms(2022, 3, 3, 12, 30)  # 12 pm is noon


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", (2023, 5, 8, 13, 56)),
        ("10:04 am on 19 Sept, 2023", (2023, 9, 19, 10, 4)),
        ("7:00 PM on 30 Dec 2022", (2022, 12, 30, 19, 0)),
    ],
)
def test_date_time_parsing(text: str, expected: tuple[int, int, int, int, int]) -> None:
    assert parse_date_time(text, "x") == ms(*expected)


@pytest.mark.parametrize(
    "text", ["8 May 2023", "13:56 pm on 8 May, 2023", "1:56 pm on 31 April, 2023", "1:56 pm on 8 Mayo, 2023"]
)
def test_bad_date_times(text: str) -> None:
    with pytest.raises(InputError) as info:
        parse_date_time(text, "[0].conversation.session_1_date_time")
    assert info.value.item == "[0].conversation.session_1_date_time"


def _break(path: list[Any], value: Any, *, delete: bool = False) -> list[dict[str, Any]]:
    data = copy.deepcopy(sample())
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("data", "item"),
    [
        (
            _break([0, "conversation", "session_2", 2, "text"], None, delete=True),
            "[0].conversation.session_2[2].text",
        ),
        (_break([0, "conversation", "session_2", 1, "speaker"], 5), "[0].conversation.session_2[1].speaker"),
        (_break([0, "conversation", "session_2", 0, "dia_id"], ""), "[0].conversation.session_2[0].dia_id"),
        (
            _break([0, "conversation", "session_2", 1, "blip_caption"], ["a"]),
            "[0].conversation.session_2[1].blip_caption",
        ),
        (_break([0, "conversation", "session_2", 0], "hi"), "[0].conversation.session_2[0]"),
        (_break([0, "conversation", "session_2"], "hi"), "[0].conversation.session_2"),
        (
            _break([0, "conversation", "session_10_date_time"], None, delete=True),
            "[0].conversation.session_10_date_time",
        ),
        (
            _break([1, "conversation", "session_1_date_time"], "yesterday"),
            "[1].conversation.session_1_date_time",
        ),
        (_break([1, "conversation"], None, delete=True), "[1].conversation"),
        (_break([1, "sample_id"], None, delete=True), "[1].sample_id"),
        (_break([1], 3), "[1]"),
    ],
)
def test_errors_name_the_exact_item(data: object, item: str) -> None:
    with pytest.raises(InputError) as info:
        parse_locomo(data)
    assert info.value.item == item


def test_not_a_list() -> None:
    with pytest.raises(InputError, match="array of samples"):
        parse_locomo({"sample_id": "conv-x"})


@pytest.mark.skipif(not DEV_SET.is_file(), reason="shared LoCoMo dev set not present")
def test_parses_the_dev_set() -> None:
    data = json.loads(DEV_SET.read_text(encoding="utf-8"))
    sessions = parse_locomo(data)
    expected_turns = sum(
        len(turns)
        for s in data
        for key, turns in s["conversation"].items()
        if key.startswith("session_") and isinstance(turns, list)
    )
    assert len(sessions) == 128
    assert sum(len(s.messages) for s in sessions) == expected_turns == 2760
    assert len({s.tenant for s in sessions}) == len(data) == 5
    ids = [m.id for s in sessions for m in s.messages]
    assert len(set(ids)) == len(ids)
    first = sessions[0].messages[0]
    assert (first.id, first.name, first.timestamp) == ("conv-26/D1:1", "Caroline", ms(2023, 5, 8, 13, 56))
