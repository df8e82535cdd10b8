"""Model faults through the whole L1 path: Memory -> scheduler -> LLM engine -> OpenAIChatModel ->
a real loopback HTTP server with scripted replies, on a FakeClock.

A failed call (unusable JSON, HTTP 500, timeout, a failing dedup call) must write nothing, leave the
cursor where it was, record attempts=1 with the cause, and wait the 30 s retry delay; the retry
then stores each atom exactly once. Replies that are odd but usable (JSON wrapped in prose, one
invalid item among valid ones, dedup naming ids outside the candidates) succeed on the first call
and never supersede anything they should not.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memstrata import FakeClock, Memory, Message
from memstrata.llm.openai_compat import OpenAIChatModel
from memstrata.models import SessionStatus
from tests.support.openai_server import ScriptedOpenAIServer

MODEL = "fault-model"
CLIENT_TIMEOUT = 0.5
SESSION = "chat-1"
MAY_8 = int(datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp() * 1000)

TURNS = [
    ("m1", "Caroline", "I adopted a rescue greyhound named Biscuit last week."),
    ("m2", "Melanie", "Oh lovely! How is Biscuit settling in at home?"),
    ("m3", "Caroline", "Great, we walk along the river every morning before work."),
    ("m4", "Melanie", "I am training for the Lisbon half marathon in October."),
]


def item(content: str, type: str = "persona", *sources: str) -> dict[str, Any]:
    return {"content": content, "type": type, "priority": 60, "source_message_ids": list(sources)}


def scenes(*memories: dict[str, Any]) -> str:
    return json.dumps({"scenes": [{"scene_name": "pets and sport", "memories": list(memories)}]})


GOOD_ITEMS = [
    item("Caroline adopted a rescue greyhound named Biscuit.", "persona", "m1"),
    item("Caroline walks Biscuit along the river every morning.", "persona", "m3"),
    item("Melanie is training for the Lisbon half marathon in October.", "episodic", "m4"),
]
GOOD = scenes(*GOOD_ITEMS)
GOOD_CONTENTS = sorted(str(i["content"]) for i in GOOD_ITEMS)


@dataclass(frozen=True, slots=True)
class Fault:
    """One way a model call fails: how to script it, and what ``last_error`` must mention."""

    name: str
    script: Callable[[ScriptedOpenAIServer], None]
    cause: tuple[str, ...]


FAILURES = [
    Fault(
        "malformed-json",
        lambda s: s.enqueue_chat('{"scenes": [{"scene_name": "pets", "memories": [{"content": '),
        ("ParseError", "no JSON value"),
    ),
    Fault(
        "http-500",
        lambda s: s.enqueue_error(500, "upstream exploded"),
        ("ModelError", "HTTP 500", "upstream exploded"),
    ),
    Fault(
        "timeout",
        lambda s: s.enqueue_delay(CLIENT_TIMEOUT + 1.5, GOOD),  # the reply comes too late to count
        ("ModelError", "timed out after 0.5 s"),
    ),
]


@pytest.fixture
def memory(home: Path, clock: FakeClock, openai_server: ScriptedOpenAIServer) -> Iterator[Memory]:
    """Memory with the LLM engine on the loopback server, a 0.5 s client timeout, no embedder."""
    # No per-call retries: each scripted fault must reach the scheduler, which retries the stage.
    chat = OpenAIChatModel(openai_server.base_url, "", MODEL, timeout_seconds=CLIENT_TIMEOUT, retries=0)
    # L2 kept far off: every run_pending and every request here is L1's.
    pipeline = {"l2_delay_after_l1_seconds": 86_400}
    with Memory.open(home, clock=clock, embedder=None, chat_model=chat, pipeline=pipeline) as mem:
        yield mem


def capture(mem: Memory, turns: list[tuple[str, str, str]] = TURNS, minute: int = 0) -> list[Message]:
    """Capture ``turns`` (id, speaker, text) into the session, a minute apart; all must be stored."""
    batch = [
        {"role": "user", "id": mid, "name": name, "content": text, "timestamp": MAY_8 + (minute + i) * 60_000}
        for i, (mid, name, text) in enumerate(turns)
    ]
    stored = list(mem.capture(batch, session_key=SESSION).stored)
    assert len(stored) == len(turns)
    return stored


def session(mem: Memory) -> SessionStatus:
    """The pipeline status of the test session."""
    [st] = [s for s in mem.status().sessions if s.session_key == SESSION]
    return st


def assert_caught_up(mem: Memory, last_seq: int) -> None:
    """The cursor is at the last message; nothing pending, no error, no timer."""
    st = session(mem)
    got = (st.cursor, st.lag, st.pending, st.attempts, st.last_error, st.fire_at)
    assert got == (last_seq, 0, 0, 0, None, None), st


def assert_l0_intact(mem: Memory, captured: list[Message]) -> None:
    """L0 holds exactly the captured messages, unchanged."""
    assert mem.messages(session_key=SESSION) == captured
    assert mem.status().messages == len(captured)


# --- failures: nothing written, retried after the delay ----------------------------------------


@pytest.mark.parametrize("fault", FAILURES, ids=lambda f: f.name)
def test_a_failed_extraction_writes_nothing_and_the_retry_stores_each_atom_once(
    fault: Fault, memory: Memory, clock: FakeClock, openai_server: ScriptedOpenAIServer
) -> None:
    captured = capture(memory)
    fault.script(openai_server)

    assert memory.run_pending() == 1

    st = session(memory)
    assert memory.atoms(include_superseded=True) == []
    assert (st.cursor, st.lag, st.attempts) == (0, len(TURNS), 1)
    assert st.last_error is not None and all(c in st.last_error for c in fault.cause), st.last_error
    assert st.fire_at == clock.now_ms() + 30_000
    assert_l0_intact(memory, captured)

    clock.advance(29)  # the retry waits out its delay
    assert memory.run_pending() == 0
    assert len(openai_server.bodies()) == 1

    clock.advance(2)
    openai_server.enqueue_chat(GOOD)
    assert memory.run_pending() == 1

    atoms = memory.atoms(include_superseded=True)
    assert sorted(a.content for a in atoms) == GOOD_CONTENTS
    assert len({a.id for a in atoms}) == len(atoms) and all(a.superseded_by is None for a in atoms)
    assert_caught_up(memory, captured[-1].seq)
    assert_l0_intact(memory, captured)

    failed, retried = openai_server.bodies()
    assert failed["messages"] == retried["messages"]  # the same window, nothing skipped
    assert retried["model"] == MODEL and retried["response_format"]["type"] == "json_schema"
    assert all(f"[{mid}]" in retried["messages"][1]["content"] for mid, _, _ in TURNS)

    memory.end_session(SESSION)  # nothing is pending: no call, nothing stored again
    assert len(openai_server.bodies()) == 2
    assert memory.status().atoms == len(GOOD_ITEMS)


def test_a_failed_dedup_call_discards_the_whole_window_until_the_retry(
    memory: Memory, clock: FakeClock, openai_server: ScriptedOpenAIServer
) -> None:
    first = seed(memory, openai_server)
    more = capture(memory, [("m5", "Caroline", "Biscuit the greyhound loves the river walks.")], minute=10)
    draft = scenes(item("Caroline adopted the greyhound Biscuit in May 2023.", "persona", "m5"))
    openai_server.enqueue_chat(draft)
    openai_server.enqueue_error(500, "dedup backend down")

    memory.end_session(SESSION)  # one new turn is below the warm-up threshold: force the run

    st = session(memory)
    assert (st.cursor, st.attempts) == (first[-1].seq, 1)
    assert st.last_error is not None and "HTTP 500" in st.last_error
    assert sorted(a.content for a in memory.atoms(include_superseded=True)) == GOOD_CONTENTS

    clock.advance(31)
    openai_server.enqueue_chat(draft)
    openai_server.enqueue_chat(json.dumps({"decisions": [{"index": 0, "action": "store"}]}))
    assert memory.run_pending() == 1

    contents = [a.content for a in memory.atoms(include_superseded=True)]
    assert sorted(contents) == sorted([*GOOD_CONTENTS, "Caroline adopted the greyhound Biscuit in May 2023."])
    assert_caught_up(memory, more[-1].seq)
    assert_l0_intact(memory, [*first, *more])
    assert len(openai_server.bodies()) == 1 + 4  # seed, then extract + dedup twice


# --- odd but usable replies: succeed at once ------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        f"Sure! Here are the memories:\n```json\n{GOOD}\n```\nTell me if you need more.",
        f"Here is what I found: {GOOD} Hope this helps!",
    ],
    ids=["fenced-in-prose", "bare-in-prose"],
)
def test_json_wrapped_in_prose_is_stored_on_the_first_call(
    reply: str, memory: Memory, openai_server: ScriptedOpenAIServer
) -> None:
    captured = capture(memory)
    openai_server.enqueue_chat(reply)

    assert memory.run_pending() == 1

    assert sorted(a.content for a in memory.atoms()) == GOOD_CONTENTS
    assert_caught_up(memory, captured[-1].seq)
    assert_l0_intact(memory, captured)
    assert len(openai_server.bodies()) == 1


def test_an_invalid_memory_type_drops_that_item_and_stores_the_valid_ones(
    memory: Memory, openai_server: ScriptedOpenAIServer
) -> None:
    captured = capture(memory)
    bad = item("Melanie gossips about the neighbours.", "gossip", "m2")
    openai_server.enqueue_chat(scenes(GOOD_ITEMS[0], bad, *GOOD_ITEMS[1:]))

    assert memory.run_pending() == 1

    atoms = memory.atoms()
    assert sorted(a.content for a in atoms) == GOOD_CONTENTS
    assert {a.content: a.source_message_ids for a in atoms}[str(GOOD_ITEMS[0]["content"])] == ("m1",)
    assert_caught_up(memory, captured[-1].seq)
    assert_l0_intact(memory, captured)


@pytest.mark.parametrize("action", ["update", "merge"])
def test_dedup_targets_outside_the_candidates_supersede_nothing(
    action: str, memory: Memory, openai_server: ScriptedOpenAIServer
) -> None:
    first = seed(memory, openai_server)
    atoms = {a.content: a for a in memory.atoms()}
    biscuit = atoms["Caroline adopted a rescue greyhound named Biscuit."]
    marathon = atoms["Melanie is training for the Lisbon half marathon in October."]
    more = capture(
        memory, [("m5", "Caroline", "Biscuit the greyhound came from a rescue in May.")], minute=10
    )
    new = "Caroline adopted the rescue greyhound Biscuit from a shelter."
    openai_server.enqueue_chat(scenes(item(new, "persona", "m5")))
    # A real atom that is not this draft's candidate, and an id that exists nowhere.
    outsiders = [marathon.id, "ghost-atom-id"]
    targets = [biscuit.id, *outsiders] if action == "merge" else outsiders
    merged = "Caroline adopted the rescue greyhound Biscuit from a shelter and walks him by the river."
    decision = {"index": 0, "action": action, "target_ids": targets, "merged_content": merged}
    openai_server.enqueue_chat(json.dumps({"decisions": [decision]}))

    memory.end_session(SESSION)

    dedup_prompt = openai_server.bodies()[-1]["messages"][1]["content"]
    assert f"id={biscuit.id}" in dedup_prompt and marathon.id not in dedup_prompt  # the setup holds
    after = {a.id: a for a in memory.atoms(include_superseded=True)}
    assert after[marathon.id].superseded_by is None  # never touched by a decision about Biscuit
    [added] = [a for a in after.values() if a.id not in {b.id for b in atoms.values()}]
    if action == "merge":  # the one valid target is merged; the outsiders are ignored
        assert added.content == merged and added.version == 2
        assert after[biscuit.id].superseded_by == added.id
        assert set(added.source_message_ids) == {"m5", *biscuit.source_message_ids}
    else:  # an update left without a valid target is stored as new information
        assert added.content == new and added.version == 1
        assert all(a.superseded_by is None for a in after.values())
    assert_caught_up(memory, more[-1].seq)
    assert_l0_intact(memory, [*first, *more])


def seed(memory: Memory, openai_server: ScriptedOpenAIServer) -> list[Message]:
    """The four turns extracted into the three good atoms (one run, no dedup call: store empty)."""
    captured = capture(memory)
    openai_server.enqueue_chat(GOOD)
    assert memory.run_pending() == 1
    assert sorted(a.content for a in memory.atoms()) == GOOD_CONTENTS
    assert len(openai_server.bodies()) == 1
    return captured
