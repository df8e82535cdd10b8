"""The LLM engine against a real model server: llama.cpp (xllamacpp) serving Gemma 3 270M on
127.0.0.1, two threads, a 2048-token context (``tests/support/llama_server.py``).

A 270M model writes poor memories; these tests check what the engine does with a real server's
behaviour, not the memories' quality: structured outputs enforced, a prompt too long for the
context refused and then shrunk, every message kept, atoms made or each failure recorded for a
retry, the sandbox holding, the degradations counted. Few calls, small ``max_tokens``.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from memstrata import Memory
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.errors import ContextLengthError
from memstrata.llm.openai_compat import OpenAIChatModel
from memstrata.llm.scripted import ScriptedChatModel
from memstrata.models import ChatMessage, NewMessage, ResponseSchema, Role
from tests.support.llama_server import LlamaServer

pytestmark = pytest.mark.llama

PICK = ResponseSchema(
    "pick",
    {
        "type": "object",
        "properties": {"colour": {"type": "string", "maxLength": 12}, "number": {"type": "integer"}},
        "required": ["colour", "number"],
    },
)
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def long_week(name: str, place: str) -> str:
    """About 700 tokens of one person's week: with the rules, two of these overflow 2048 tokens."""
    parts = [
        f"On {day} I walked along the river in {place}, bought bread at the corner bakery, answered "
        f"emails from the office, called my aunt about the family dinner, and in the evening I read "
        f"a chapter of a novel about sailors before going to bed rather late, as {name} always does."
        for day in DAYS
    ]
    return " ".join(parts * 2)


def chat_model(server: LlamaServer, max_tokens: int) -> OpenAIChatModel:
    return OpenAIChatModel(server.base_url, "", server.model, timeout_seconds=300, max_tokens=max_tokens)


async def test_the_server_enforces_the_json_schema(llama_server: LlamaServer) -> None:
    async with aclosing(chat_model(llama_server, 64)) as chat:
        reply = await chat.complete(
            [ChatMessage("user", "Pick a colour and a number. Answer in JSON.")], schema=PICK
        )
    data = json.loads(reply.content)
    assert set(data) == {"colour", "number"} and isinstance(data["number"], int)
    assert chat.structured_output == "json_schema"
    assert chat.degradations.snapshot() == {}


async def test_a_prompt_longer_than_the_context_is_a_context_length_error(llama_server: LlamaServer) -> None:
    async with aclosing(chat_model(llama_server, 4)) as chat:
        with pytest.raises(ContextLengthError, match="context size"):
            await chat.complete([ChatMessage("user", long_week("Ana", "Porto") * 3)])


def settings_for(server: LlamaServer) -> dict[str, Any]:
    """The LLM engine on the real server, with small budgets: one short window, one tool step."""
    return {
        "pipeline": {"engine": "llm", "window_size": 2, "background_size": 2},
        "llm": {
            "base_url": server.base_url,
            "model": server.model,
            "max_tokens": 192,
            "max_tokens_cap": 384,
            "timeout_seconds": 300,
            "tool_calling": "json",  # Gemma's template has no tool calls: JSON actions, schema-bound
        },
        "persona": {"tool_max_steps": 1, "tool_timeout_seconds": 300},
    }


def test_a_conversation_goes_through_l1_l2_and_l3_on_the_real_model(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    home = tmp_path / "data"
    outside = tmp_path / "outside.md"
    outside.write_text("not the model's\n")
    # Two long turns, extracted earlier (by a model that found nothing in them): they are the
    # next window's background, and with the rules they overflow the 2048-token context.
    earlier = ScriptedChatModel(responder=lambda _: '{"scenes": []}')
    with Memory.open(home, embedder=HashingEmbedder(64), chat_model=earlier) as mem:
        mem.capture(
            [
                NewMessage(Role.USER, long_week("Caroline", "Lisbon"), name="Caroline"),
                NewMessage(Role.USER, long_week("Melanie", "Porto"), name="Melanie"),
            ],
            session_key="chat",
            user_id="caroline",
        )
        mem.end_session("chat", user_id="caroline")
    new = [
        NewMessage(
            Role.USER, "I adopted a puppy named Max last week, and I work as a nurse.", name="Caroline"
        ),
        NewMessage(Role.USER, "Congratulations on Max! I started pottery classes on Monday.", name="Melanie"),
    ]
    with Memory.open(home, embedder=HashingEmbedder(64), **settings_for(llama_server)) as mem:
        mem.capture(new, session_key="chat", user_id="caroline")
        mem.end_session("chat", user_id="caroline")
        report = mem.run_all()
        status = mem.status()
        atoms = mem.atoms(user_id="caroline")

    assert status.messages == 4  # every message stored, whatever the model did
    # The window did not fit with its background: it was sent again with less, not failed.
    assert status.degradations.get("context_shrunk", 0) >= 1, status.degradations
    [session] = status.sessions
    if session.last_error is None:  # caught up; a 270M model may find nothing worth keeping
        assert session.lag == 0
        assert report.upper >= 1 or not atoms  # L2 (and L3) ran on the atoms it made
    else:  # a failure is recorded and armed for a retry, with nothing half-written
        assert session.fire_at is not None and session.attempts >= 1 and not atoms
    failing = [t for t in status.tenants if t.l2_error or t.l3_error]
    assert report.upper_failed == len(failing)
    # The sandbox held: nothing outside the tenant's profile folder changed.
    assert outside.read_text() == "not the model's\n"
    tenant_dir = home / "profiles" / "u=caroline,a=default"
    stray = [p for p in (home / "profiles").rglob("*") if p.is_file() and tenant_dir not in p.parents]
    assert not stray, stray
