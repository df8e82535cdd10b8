"""Agent tools over a real memory: results, schemas, the per-turn search limit, bad calls."""

from __future__ import annotations

import json

import pytest

from memstrata import Memory, TurnLimitError
from memstrata.tools import MemoryTools


@pytest.fixture
def tools(keyword_memory: Memory) -> MemoryTools:
    keyword_memory.capture(
        [
            {
                "role": "user",
                "name": "Maya",
                "content": "I'm allergic to peanuts and I love grilled sardines.",
            },
            {"role": "user", "name": "Maya", "content": "Always answer me in short bullet points."},
        ],
        session_key="s",
        user_id="maya",
    )
    keyword_memory.end_session("s", user_id="maya")
    return MemoryTools(keyword_memory, user_id="maya")


def test_memory_search_returns_atoms_with_sources(tools: MemoryTools) -> None:
    hits = tools.memory_search("peanuts allergy")
    assert hits and "peanuts" in hits[0]["content"]
    assert hits[0]["layer"] == "L1" and hits[0]["source_message_ids"]


def test_conversation_search_returns_raw_messages(tools: MemoryTools) -> None:
    hits = tools.conversation_search("sardines")
    assert hits and {h["layer"] for h in hits} == {"L0"}
    assert "sardines" in hits[0]["content"]


def test_the_fourth_search_call_of_a_turn_is_refused(tools: MemoryTools) -> None:
    for _ in range(3):
        tools.memory_search("peanuts", turn_id="t1")
    with pytest.raises(TurnLimitError, match="at most 3"):
        tools.conversation_search("sardines", turn_id="t1")
    assert tools.memory_search("peanuts", turn_id="t2")  # a new turn starts afresh
    refused = json.loads(tools.call("memory_search", {"query": "x"}, turn_id="t1"))
    assert "search limit reached" in refused["error"]


def test_calls_without_a_turn_id_are_not_limited(tools: MemoryTools) -> None:
    for _ in range(5):
        tools.memory_search("peanuts")


def test_openai_tool_specs_are_well_formed(tools: MemoryTools) -> None:
    specs = tools.openai_tools()
    assert [s["function"]["name"] for s in specs] == ["memory_search", "conversation_search", "read_scene"]
    for s in specs:
        assert s["type"] == "function"
        params = s["function"]["parameters"]
        assert params["type"] == "object" and set(params["required"]) <= set(params["properties"])


@pytest.mark.parametrize(
    ("name", "args", "error"),
    [
        ("memory_search", "{not json", "not valid JSON"),
        ("drop_tables", "{}", "unknown tool"),
        ("memory_search", '{"query": "x", "sql": "1"}', "unknown argument"),
        ("memory_search", "{}", "bad arguments"),
        ("memory_search", "[1, 2]", "JSON object"),
        ("read_scene", '{"path": "../../etc/passwd"}', ""),
        # The spec the model reads is the check its call gets: 50 is over the limit's maximum.
        ("memory_search", '{"query": "x", "limit": 50}', "bad arguments for memory_search: limit"),
        ("memory_search", '{"query": "x", "type": "fact"}', "must be 'persona', 'episodic' or"),
        ("conversation_search", '{"query": 7}', "query: expected a string, got number"),
        ("memory_search", "[" * 100_000 + "]" * 100_000, "nest more than 100 levels"),
    ],
)
def test_bad_tool_calls_answer_with_an_error_the_model_can_read(
    tools: MemoryTools, name: str, args: str, error: str
) -> None:
    out = json.loads(tools.call(name, args))
    assert "error" in out and error in out["error"]


def test_call_runs_a_tool_from_model_json(tools: MemoryTools) -> None:
    out = json.loads(tools.call("memory_search", '{"query": "bullet points", "type": "instruction"}'))
    assert out and all(h["type"] == "instruction" for h in out)
