"""parse_seed: both seed layouts, timestamps, ids and names, and exact error locations."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from memstrata.errors import InputError
from memstrata.interchange import ImportSession, parse_seed
from memstrata.models import NewMessage, Role, Tenant

MAY_8 = int(datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp() * 1000)


def session(**extra: Any) -> dict[str, Any]:
    return {
        "sessionKey": "chat-1",
        "conversations": [
            [
                {"role": "user", "content": "I moved to Lisbon."},
                {"role": "assistant", "content": "How do you like it?"},
            ],
            [{"role": "user", "content": "Love the food."}],
        ],
        **extra,
    }


def test_format_a_and_b_give_the_same_sessions() -> None:
    a = parse_seed({"sessions": [session()]})
    b = parse_seed([session()])
    assert a == b
    assert a == [
        ImportSession(
            tenant=Tenant(),
            session_key="chat-1",
            session_id="chat-1",  # defaults to the key
            messages=(
                NewMessage(role=Role.USER, content="I moved to Lisbon."),
                NewMessage(role=Role.ASSISTANT, content="How do you like it?"),
                NewMessage(role=Role.USER, content="Love the food."),
            ),
        )
    ]


def test_session_fields_and_tenant() -> None:
    (parsed,) = parse_seed([session(sessionId="run-7", userId="alice", agentId="travel-bot")])
    assert parsed.session_key == "chat-1"
    assert parsed.session_id == "run-7"
    assert parsed.tenant == Tenant(user_id="alice", agent_id="travel-bot")


def test_several_sessions_keep_their_order() -> None:
    parsed = parse_seed({"sessions": [session(sessionKey="b"), session(sessionKey="a"), session()]})
    assert [s.session_key for s in parsed] == ["b", "a", "chat-1"]
    assert parse_seed({"sessions": []}) == []
    assert parse_seed([]) == []


def test_id_and_name_are_honoured() -> None:
    raw = session()
    raw["conversations"][0][0].update(id="m-1", name="Alice")
    (parsed,) = parse_seed([raw])
    assert parsed.messages[0].id == "m-1"
    assert parsed.messages[0].name == "Alice"
    assert parsed.messages[1].id is None
    assert parsed.messages[1].name is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (MAY_8, MAY_8),  # epoch ms
        (MAY_8 // 1000, MAY_8),  # epoch seconds
        (MAY_8 / 1000 + 0.5, MAY_8 + 500),  # fractional seconds
        ("2023-05-08T13:56:00Z", MAY_8),
        ("2023-05-08T15:56:00+02:00", MAY_8),
        ("2023-05-08T13:56:00", MAY_8),  # naive = UTC
        ("2023-05-08 13:56:00.250", MAY_8 + 250),
        (None, None),
    ],
)
def test_timestamps(value: object, expected: int | None) -> None:
    raw = session()
    raw["conversations"][0][0]["timestamp"] = value
    (parsed,) = parse_seed([raw])
    assert parsed.messages[0].timestamp == expected


def test_missing_timestamp_is_none() -> None:
    (parsed,) = parse_seed([session()])
    assert all(m.timestamp is None for m in parsed.messages)


def broken(path: list[Any], value: Any, *, delete: bool = False) -> dict[str, Any]:
    """A format-A document with three sessions where ``sessions[2]`` + ``path`` is set or removed."""
    doc: dict[str, Any] = {"sessions": [session(), session(), session()]}
    target: Any = doc["sessions"][2]
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return copy.deepcopy(doc)


@pytest.mark.parametrize(
    ("doc", "item"),
    [
        (broken(["conversations", 0, 1, "role"], "system"), "sessions[2].conversations[0][1].role"),
        (broken(["conversations", 0, 1, "role"], None, delete=True), "sessions[2].conversations[0][1].role"),
        (broken(["conversations", 1, 0, "content"], 42), "sessions[2].conversations[1][0].content"),
        (
            broken(["conversations", 1, 0, "timestamp"], "yesterday"),
            "sessions[2].conversations[1][0].timestamp",
        ),
        (broken(["conversations", 1, 0, "timestamp"], -5), "sessions[2].conversations[1][0].timestamp"),
        (broken(["conversations", 1, 0, "timestamp"], True), "sessions[2].conversations[1][0].timestamp"),
        (broken(["conversations", 1, 0, "id"], 7), "sessions[2].conversations[1][0].id"),
        (broken(["conversations", 1, 0, "name"], ""), "sessions[2].conversations[1][0].name"),
        (broken(["conversations", 1, 0], "hello"), "sessions[2].conversations[1][0]"),
        (broken(["conversations", 1], {"role": "user"}), "sessions[2].conversations[1]"),
        (broken(["conversations"], None, delete=True), "sessions[2].conversations"),
        (broken(["sessionKey"], None, delete=True), "sessions[2].sessionKey"),
        (broken(["sessionKey"], "  "), "sessions[2].sessionKey"),
        (broken(["userId"], 3), "sessions[2].userId"),
        ({"sessions": [session(), "chat"]}, "sessions[1]"),
        ({"sessions": {"a": 1}}, "sessions"),
        ({"conversations": []}, "sessions"),
    ],
)
def test_errors_name_the_exact_item(doc: object, item: str) -> None:
    with pytest.raises(InputError) as info:
        parse_seed(doc)
    assert info.value.item == item
    assert str(info.value).startswith(f"{item}: ")


def test_format_b_paths_start_at_the_index() -> None:
    raw = session()
    raw["conversations"][0][1]["role"] = "bot"
    with pytest.raises(InputError) as info:
        parse_seed([session(), raw])
    assert info.value.item == "[1].conversations[0][1].role"
    assert "'bot'" in str(info.value)


def test_not_a_seed_document() -> None:
    with pytest.raises(InputError, match="object or an array"):
        parse_seed("sessions")
