"""Metadata filters parsed and checked (``models.filters``), custom metadata bounded
(``json_input.json_object``), and atoms inheriting their messages' keys (``layers.l1.writer``)."""

from __future__ import annotations

from typing import Any

import pytest

from memstrata.errors import InputError
from memstrata.layers.l1.writer import plan_window
from memstrata.models import (
    AtomDraft,
    AtomType,
    Message,
    MetadataCondition,
    MetadataFilter,
    Role,
    Tenant,
    metadata_filter,
)
from memstrata.models.json_input import json_object
from memstrata.retrieval.search import to_hit


def test_a_value_is_equality_and_in_lists_values() -> None:
    parsed = metadata_filter({"app": "crm", "n": {"in": [1, 2.5, True, "x", 1]}})
    assert parsed == MetadataFilter(
        (MetadataCondition("app", ("crm",)), MetadataCondition("n", (1, 2.5, True, "x")))  # repeats dropped
    )
    assert metadata_filter(None) == MetadataFilter() and not metadata_filter({})


@pytest.mark.parametrize(
    ("filters", "item", "words"),
    [
        ("app=crm", "filters", "must be an object"),
        ({"a b": 1}, "filters", "a key must be"),
        ({"": 1}, "filters", "a key must be"),
        ({"a.b": 1}, "filters", "a key must be"),  # no paths into nested objects
        ({"9lives": 1}, "filters", "a key must be"),
        ({"k" * 65: 1}, "filters", "a key must be"),
        ({"app": {"like": "c%"}}, "filters.app", "unknown operator 'like'"),
        ({"app": {"in": ["a"], "eq": "b"}}, "filters.app", "unknown operator"),
        ({"app": {}}, "filters.app", "unknown operator none"),
        ({"app": {"in": "crm"}}, "filters.app.in", "takes an array"),
        ({"app": {"in": []}}, "filters.app.in", "1 to 100 values"),
        ({"app": {"in": list(range(101))}}, "filters.app.in", "1 to 100 values"),
        ({"app": {"in": ["a", None]}}, "filters.app.in[1]", "string, number or boolean, got null"),
        ({"app": None}, "filters.app", "got null"),
        ({"app": ["crm"]}, "filters.app", "got list"),
        ({"app": {"in": [["crm"]]}}, "filters.app.in[0]", "got list"),
        ({"n": float("inf")}, "filters.n", "finite"),
        ({"n": 2**63}, "filters.n", "64 bits"),
        ({"s": "x" * 513}, "filters.s", "at most 512"),
        ({"s": "a\x00b"}, "filters.s", "without NUL"),
        ({"s": "\ud800"}, "filters.s", "valid text"),
        ({f"k{i}": 1 for i in range(21)}, "filters", "at most 20 keys"),
    ],
)
def test_a_bad_filter_is_an_input_error_naming_its_part(filters: object, item: str, words: str) -> None:
    with pytest.raises(InputError, match=words) as bad:
        metadata_filter(filters)
    assert bad.value.item == item


@pytest.mark.parametrize(
    ("stored", "wanted", "match"),
    [
        ("1", 1, False),
        (1, 1.0, True),
        (True, 1, False),
        (1, True, False),
        (False, False, True),
        ({"1": 1}, "1", False),
        ("crm", "crm", True),
    ],
)
def test_equality_is_by_json_type_and_value(stored: object, wanted: Any, match: bool) -> None:
    assert metadata_filter({"k": wanted}).matches({"k": stored}) is match
    assert not metadata_filter({"k": wanted}).matches({})  # a missing key never matches


def test_custom_metadata_is_a_bounded_json_object() -> None:
    assert json_object(None, "m") == {} and json_object({"t": (1, 2)}, "m") == {"t": [1, 2]}
    assert json_object({"s": "x" * 16_000}, "m")["s"] == "x" * 16_000
    for bad, words in [
        ([1], "must be a JSON object"),
        ({"s": "x" * 16_400}, "at most 16384 bytes"),
        ({"f": float("nan")}, "must be JSON"),
        ({"o": object()}, "must be JSON"),
        ({"s": "\udc80"}, "valid text"),
    ]:
        with pytest.raises(InputError, match=words) as err:
            json_object(bad, "messages[3].metadata")
        assert err.value.item == "messages[3].metadata"


T = Tenant("ann")


def test_an_atom_inherits_its_messages_keys_and_the_engine_keys_win() -> None:
    window = [
        Message("m1", T, "s", "s", Role.USER, "a", 1_000, 1_000, metadata={"app": "crm", "ticket": 1}, seq=1),
        Message(
            "m2", T, "s", "s", Role.USER, "b", 2_000, 2_000, metadata={"ticket": 2, "message_time": 0}, seq=2
        ),
        Message(
            "m3",
            T,
            "s",
            "s",
            Role.USER,
            "c",
            3_000,
            3_000,
            metadata={"other": True, "activity_start": "1999-01-01"},
            seq=3,
        ),
    ]
    draft = AtomDraft(AtomType.PERSONA, "Ann likes tea.", 60, "tea", ("m1", "m2"), {"speaker": "Ann"})
    plain = AtomDraft(AtomType.PERSONA, "Ann likes cake.", 60, "cake", ("m3",), {"speaker": "Ann"})
    plan = plan_window(T, "s", window, [draft, plain], [], [[], []], 9_000)
    made = plan.new[0].metadata
    assert made == {
        "app": "crm",
        "ticket": 2,
        "message_time": 2_000,
        "speaker": "Ann",
    }  # the later message wins
    assert plan.new[1].metadata == {
        "other": True,
        "message_time": 3_000,
        "speaker": "Ann",
    }  # its own source only


def test_an_l0_hit_shows_custom_keys_under_the_message_own_fields() -> None:
    custom = {"app": "crm", "timestamp": 5, "role": "x", "message_time": 7}
    m = Message("m1", T, "s", "s", Role.USER, "a", 1_000, 1_000, "Ann", 4, custom)
    assert to_hit(m, 0.5).metadata == {
        "app": "crm",
        "session_key": "s",
        "role": "user",
        "name": "Ann",
        "timestamp": 1_000,
    }
