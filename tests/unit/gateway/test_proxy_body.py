"""The proxy's request body: read once, written back with only what the injection changed
re-encoded, everything else the client's own text."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memstrata.gateway.proxy.anthropic_messages import AnthropicMessages
from memstrata.gateway.proxy.body import read_body, write_body
from memstrata.gateway.proxy.dialect import Dialect, Injection, ToolPolicy
from memstrata.gateway.proxy.openai_chat import OpenAIChat
from memstrata.gateway.proxy.openai_responses import OpenAIResponses

# Spellings json.loads + json.dumps would change: spaces, a float's digits, escapes, key order.
CHAT = (
    '{ "model" : "m",\n "temperature": 0.10000000000000000555, "messages": [\n'
    '  {"role": "system", "content": "Be brief."},\n'
    '  {"role": "assistant", "content": "caf\\u00e9 \\ud83d\\ude00", "z": 1E+2},\n'
    '  {"role": "user", "content": "Where do I live?"}\n ],\n'
    ' "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],\n'
    ' "unknown": {"a": [1, 2.50, null]} }'
)
INJECTION = Injection(system="<user-persona>\nLives in Lisbon.\n</user-persona>", memories="<m>Lisbon</m>")


@pytest.mark.parametrize(
    "text",
    [
        CHAT,
        "{}",
        ' {"a": [], "b": [[1, 2], {"c": "d"}], "a": "last wins"} ',
        '{"x": NaN, "y": -Infinity, "s": "\\ud800 lone"}',
    ],
)
def test_it_reads_what_json_loads_reads(text: str) -> None:
    parsed = read_body(text.encode())
    assert parsed is not None
    assert json.dumps(parsed.body) == json.dumps(json.loads(text))
    assert write_body(parsed, parsed.body) != b""
    assert json.dumps(json.loads(write_body(parsed, dict(parsed.body)))) == json.dumps(json.loads(text))


@pytest.mark.parametrize("raw", [b'{"a": 1} x', b"[1, 2]", b'{"a": }', b"", b'{"a": 1,}', b'"s"'])
def test_what_is_not_one_json_object_is_none(raw: bytes) -> None:
    assert read_body(raw) is None


def test_a_utf16_body_is_read_and_written_whole() -> None:
    raw = json.dumps({"messages": [{"role": "user", "content": "olá"}]}).encode("utf-16")
    parsed = read_body(raw)
    assert parsed is not None and parsed.text == ""
    assert json.loads(write_body(parsed, parsed.body)) == json.loads(raw)


@pytest.mark.parametrize(
    ("dialect", "text"),
    [
        (OpenAIChat(), CHAT),
        (
            OpenAIResponses(),
            '{"model":"m","instructions":"Be brief.","input":[{"role":"user","content":'
            '[{"type":"input_text","text":"Where?"}]},{"type":"reasoning","summary":[]},'
            '{"role":"user","content":"Where do I live?"}],"store":false}',
        ),
        (
            AnthropicMessages(),
            '{"model":"c","max_tokens":9,"system":[{"type":"text","text":"S","cache_control":'
            '{"type":"ephemeral"}}],"messages":[{"role":"user","content":"Hi"},{"role":"assistant",'
            '"content":[{"type":"text","text":"Hello"}]},{"role":"user","content":"Where do I live?"}]}',
        ),
    ],
)
def test_only_the_injected_parts_are_re_encoded(dialect: Dialect, text: str) -> None:
    parsed = read_body(text.encode())
    assert parsed is not None
    turn = dialect.read(parsed.body, ToolPolicy())
    out = dialect.inject(parsed.body, turn, INJECTION)
    sent = write_body(parsed, out).decode()
    assert json.loads(sent) == json.loads(json.dumps(out))  # the same JSON as encoding it whole
    changed = _changed(parsed.body, out)
    untouched = [v for v in _parts(parsed.body) if all(v is not c for c in changed)]
    for value in untouched:  # each part left alone is there in the client's own spelling
        start, end = _span(parsed, value)
        assert text[start:end] in sent
    assert INJECTION.memories in json.loads(sent).__repr__()


def test_the_client_spellings_survive_an_injection() -> None:
    parsed = read_body(CHAT.encode())
    assert parsed is not None
    chat = OpenAIChat()
    sent = write_body(
        parsed, chat.inject(parsed.body, chat.read(parsed.body, ToolPolicy()), INJECTION)
    ).decode()
    for spelling in ("0.10000000000000000555", '"caf\\u00e9 \\ud83d\\ude00", "z": 1E+2', "[1, 2.50, null]"):
        assert spelling in sent


def _parts(body: dict[str, Any]) -> list[Any]:
    return [e for v in body.values() for e in (v if isinstance(v, list) else [v])]


def _changed(before: dict[str, Any], after: dict[str, Any]) -> list[Any]:
    kept = {id(e) for e in _parts(after)}
    return [e for e in _parts(before) if id(e) not in kept]


def _span(parsed: Any, value: Any) -> tuple[int, int]:
    found = parsed.items.get(id(value))
    if found is not None and found[1] is value:
        return tuple(found[0])
    key = next(k for k, v in parsed.body.items() if v is value)
    return tuple(parsed.members[key])


def test_the_parts_beside_the_new_text_part_stay_the_clients_text() -> None:
    # The prompt carries an image: the memories' text part goes before the prompt's text, and
    # the image (its "\/" escapes, which json.dumps would not write) is copied, not re-encoded.
    image = '{"type": "image_url", "image_url": {"url": "data:image\\/png;base64,iVBORw0KGgo="}}'
    text = (
        '{"model": "m", "messages": [{"role": "user", "name": "ana", "content": '
        f'[{{"type": "text", "text": "What is in it?"}}, {image}]}}]}}'
    )
    parsed = read_body(text.encode())
    assert parsed is not None
    chat = OpenAIChat()
    out = chat.inject(parsed.body, chat.read(parsed.body, ToolPolicy()), INJECTION)
    sent = write_body(parsed, out).decode()
    assert image in sent and '"name":"ana"' in sent  # members: the client's value text
    assert json.loads(sent) == json.loads(json.dumps(out))
    parts = json.loads(sent)["messages"][1]["content"]  # the system message was put first
    assert [p["type"] for p in parts] == ["text", "text", "image_url"]
    assert parts[0]["text"] == INJECTION.memories
