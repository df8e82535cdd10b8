"""The LLM engine against a real model server: llama.cpp (xllamacpp) serving Gemma 3 270M on
127.0.0.1, two threads, a 2048-token context (``tests/support/llama_server.py``).

A 270M model writes poor memories; these tests check what the engine does with a real server's
behaviour, not the memories' quality: structured outputs enforced; a short conversation through
L1, L2 and L3 with atoms made (the schema bounds the reply, and a reply the model loops in until
``max_tokens`` keeps what it completed), L2 and L3 run or their failures recorded, the sandbox
holding; a prompt too long for the context refused, then shrunk and extracted; a batch the
model cannot answer recorded, retried ``max_attempts`` times and given up, its messages kept;
the degradations counted. Few calls, small ``max_tokens``.
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


CONVERSATION = (
    NewMessage(Role.USER, "I adopted a puppy named Max last week, and I work as a nurse.", name="Caroline"),
    NewMessage(Role.USER, "Congratulations on Max! I started pottery classes on Monday.", name="Melanie"),
)
TENANT_DIR = "profiles/u=caroline,a=default"
# What the engines may count on a real server (models.degradations); anything else is a new,
# undocumented way of getting by.
KNOWN_DEGRADATIONS = {
    "context_shrunk",
    "window_split",
    "message_cut",
    "truncated_replies",
    "looping_replies",
    "dropped_items",
    "tool_call_errors",
    "text_tool_calls",
    "model_retries",
}


def settings_for(server: LlamaServer, **pipeline: Any) -> dict[str, Any]:
    """The LLM engine on the real server, with small budgets: one short window, one tool step."""
    return {
        "pipeline": {"engine": "llm", "window_size": 2, "background_size": 2, **pipeline},
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


def capture_long_background(home: Path) -> None:
    """Two long turns, extracted earlier (by a model that found nothing in them): they are the
    next window's background, and with the rules they overflow the 2048-token context."""
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


def test_a_short_conversation_goes_through_l1_l2_and_l3_on_the_real_model(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    home = tmp_path / "data"
    outside = tmp_path / "outside.md"
    outside.write_text("not the model's\n")
    with Memory.open(home, embedder=HashingEmbedder(64), **settings_for(llama_server)) as mem:
        mem.capture(list(CONVERSATION), session_key="chat", user_id="caroline")
        mem.end_session("chat", user_id="caroline")  # L1
        extracted = mem.status()
        report = mem.run_all()  # L2 scenes, then the L3 persona (none yet: it is due)
        status = mem.status()
        atoms = mem.atoms(user_id="caroline")
        stored = mem.messages(user_id="caroline")

    assert [m.content for m in stored] == [m.content for m in CONVERSATION]  # every message kept
    [session] = extracted.sessions
    assert session.last_error is None and session.lag == 0, session  # L1 caught up
    # With the schema enforced the model writes memories, however poor (3 runs: atoms each time).
    assert atoms, extracted.degradations
    assert all(set(a.source_message_ids) <= {m.id for m in stored} for a in atoms)
    [tenant] = status.tenants
    # L2 ran (its cursor took the atoms) or its failure is recorded for a retry; L3 the same.
    assert (tenant.l2_error is None and tenant.l2_cursor >= 1) or tenant.l2_attempts >= 1, tenant
    persona = home / TENANT_DIR / "persona.md"
    assert persona.is_file() or (tenant.l3_error is not None and tenant.l3_attempts >= 1), tenant
    assert report.upper >= 2  # one L2 run and one L3 run
    assert report.upper_failed == (1 if tenant.l2_error or tenant.l3_error else 0)
    assert set(status.degradations) <= KNOWN_DEGRADATIONS, status.degradations
    # The sandbox held: nothing outside the tenant's profile folder changed.
    assert outside.read_text() == "not the model's\n"
    tenant_dir = home / TENANT_DIR
    stray = [p for p in (home / "profiles").rglob("*") if p.is_file() and tenant_dir not in p.parents]
    assert not stray, stray


def test_a_window_too_long_for_the_context_is_shrunk_then_extracted(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    home = tmp_path / "data"
    capture_long_background(home)
    with Memory.open(home, embedder=HashingEmbedder(64), **settings_for(llama_server)) as mem:
        mem.capture(list(CONVERSATION), session_key="chat", user_id="caroline")
        mem.end_session("chat", user_id="caroline")  # L1 only
        status = mem.status()

    assert status.messages == 4  # every message stored, whatever the model did
    # The window did not fit with its background: it was sent again with less, not failed...
    assert status.degradations.get("context_shrunk", 0) >= 1, status.degradations
    # ...and then extracted, whole or split: the cursor is past it and nothing is recorded.
    [session] = status.sessions
    assert session.last_error is None and session.lag == 0 and session.attempts == 0, session
    assert set(status.degradations) <= KNOWN_DEGRADATIONS, status.degradations


MAX_ATTEMPTS = 3


def test_a_batch_the_model_cannot_answer_is_recorded_retried_and_given_up(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    # Two reply tokens: no JSON reply can be finished in them (the schema's shortest is more), so
    # every call is cut, the window split, and the last half fails with a ParseError.
    settings = settings_for(llama_server, max_attempts=MAX_ATTEMPTS, retry_delay_seconds=0)
    settings["llm"] |= {"max_tokens": 2, "max_tokens_cap": 2}
    with Memory.open(tmp_path / "data", embedder=HashingEmbedder(64), **settings) as mem:
        mem.capture(list(CONVERSATION), session_key="chat", user_id="caroline")
        mem.end_session("chat", user_id="caroline")  # attempt 1
        [first] = mem.status().sessions
        report = mem.run_all()  # attempt 2, forced
        retried = [mem.run_pending() for _ in range(MAX_ATTEMPTS)]  # attempt 3 when due, then none
        status = mem.status()
        atoms = mem.atoms(user_id="caroline")

    assert first.attempts == 1 and first.fire_at is not None  # armed for its retry
    assert (report.l1, report.l1_failed, report.atoms, report.ok) == (1, 1, 0, False)
    assert retried == [1, 0, 0]  # due once more, then given up: no run until new activity
    [session] = status.sessions
    assert session.attempts == MAX_ATTEMPTS and session.fire_at is None, session
    assert session.last_error is not None and session.last_error.startswith("ParseError: "), session
    assert session.lag == 2 and session.cursor == 0  # nothing half-written, nothing lost
    assert status.messages == 2 and not atoms
    # Each attempt asked the server (a cut reply, then the split window's first half).
    assert status.degradations.get("truncated_replies", 0) == 2 * MAX_ATTEMPTS, status.degradations
    assert status.degradations.get("window_split", 0) == MAX_ATTEMPTS, status.degradations
