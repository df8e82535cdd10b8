"""Tolerant JSON parsing and per-item validation of model replies."""

from __future__ import annotations

import logging

import pytest
from pydantic import BaseModel

from memstrata.engines.llm.parsing import as_list, close_cut, parse_json, validate_items
from memstrata.errors import ParseError


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n[{"a": 1}]\n```',
        '```\n[{"a": 1}]\n```',
        'Here you go:\n```JSON\n[{"a": 1}]\n```\nAnything else?',
        'Sure! The memories are [{"a": 1}] as requested.',
        'I looked at [three] messages and found: [{"a": 1}]',
        '[{"a": 1,},]',
        '  [\n  {"a": 1,\n  },\n]  ',
    ],
)
def test_json_is_found_behind_fences_prose_and_trailing_commas(reply: str) -> None:
    assert parse_json(reply) == [{"a": 1}]


def test_raw_control_characters_inside_strings_are_accepted() -> None:
    reply = '{"content": "line one\nline two\tindented", "n": 1}'
    assert parse_json(reply) == {"content": "line one\nline two\tindented", "n": 1}


def test_brackets_commas_and_escaped_quotes_inside_strings_are_left_alone() -> None:
    reply = 'Result: {"text": "she said \\"[a, ]\\" then }", "list": ["x,]",],}'
    assert parse_json(reply) == {"text": 'she said "[a, ]" then }', "list": ["x,]"]}


@pytest.mark.parametrize(
    "reply", ["", "no json here", '[{"a": 1', '{"a": }', "```json\n```", "[" * 5_000 + "]" * 5_000]
)
def test_unparseable_replies_raise_parse_error_carrying_the_reply(reply: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_json(reply)
    assert caught.value.reply == reply


def test_as_list_unwraps_the_named_key_or_a_lone_list() -> None:
    assert as_list([1], "scenes", reply="") == [1]
    assert as_list({"scenes": [2], "note": [3]}, "scenes", reply="") == [2]
    assert as_list({"result": [4]}, "scenes", reply="") == [4]
    with pytest.raises(ParseError):
        as_list({"a": [1], "b": [2]}, "scenes", reply="")
    with pytest.raises(ParseError):
        as_list("text", "scenes", reply="")


class Point(BaseModel):
    x: int
    y: int


def test_invalid_items_are_dropped_and_counted_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    items = [{"x": 1, "y": 2}, {"x": "wide"}, "not an object", {"x": 3, "y": 4}]
    with caplog.at_level(logging.WARNING):
        points = validate_items(items, Point, what="points")
    assert points == [Point(x=1, y=2), Point(x=3, y=4)]
    assert "dropped 2 of 4 points" in caplog.text


@pytest.mark.parametrize(
    ("cut", "kept"),
    [
        ('{"a": [{"b": 1}, {"b', '{"a": [{"b": 1}]}'),
        ('{"a": [{"b": 1}, {"b": 2}', '{"a": [{"b": 1}, {"b": 2}]}'),
        ('Sure: {"a": [{"b": "]}"}, {"b', '{"a": [{"b": "]}"}]}'),  # brackets in strings are text
        ('{"a": [1]} and more', '{"a": [1]}'),  # not cut: the first value whole
        ('{"a": [{"b": 1}', '{"a": [{"b": 1}]}'),
    ],
)
def test_a_cut_reply_keeps_what_it_closed_and_closes_the_rest(cut: str, kept: str) -> None:
    assert close_cut(cut) == kept
    assert parse_json(kept)


@pytest.mark.parametrize("cut", ["no json", '{"a": "b', '{"a": [', '{"a": [1, 2'])
def test_a_cut_reply_that_closed_nothing_keeps_nothing(cut: str) -> None:
    assert close_cut(cut) is None
