"""L2/L3 tool calls on servers with and without tool calling: native calls, the JSON action
protocol after a server refuses ``tools`` (and only once per writer), actions written as text,
and the sandbox holding under both. Logic only: a scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata.engines.llm import json_actions
from memstrata.engines.llm.l2 import LLMSceneWriter
from memstrata.engines.llm.tool_loop import ACTION_SCHEMA
from memstrata.errors import ToolsUnsupportedError
from memstrata.llm.scripted import ScriptedChatModel
from memstrata.models import Atom, AtomType, ChatReply, Tenant, ToolCall
from memstrata.ports import ConsolidationRequest
from memstrata.settings import PersonaSettings
from memstrata.stores.files.folder import DirectoryFolder

NOW = 1_785_405_720_000
REFUSED = ToolsUnsupportedError("chat model 'm' answered HTTP 400: tools param requires --jinja flag")


def action(tool: str, **arguments: object) -> str:
    return json.dumps({"tool": tool, "arguments": arguments})


DONE = json.dumps({"tool": "done", "arguments": {}, "summary": "added the night shifts"})


@pytest.fixture
def scenes(tmp_path: Path) -> Path:
    """A tenant's scene folder holding work.md, beside a file outside it."""
    folder = tmp_path / "profiles" / "u=ann,a=default" / "scene_blocks"
    folder.mkdir(parents=True)
    (folder / "work.md").write_text("# Work\n\nAnn is a nurse.\n")
    (tmp_path / "outside.md").write_text("outside\n")
    return folder


def request(folder: Path) -> ConsolidationRequest:
    atom = Atom("a1", Tenant("ann"), AtomType.PERSONA, "Ann works night shifts.", 60, "work", seq=1)
    return ConsolidationRequest(Tenant("ann"), DirectoryFolder(folder), (atom,), (), {}, {}, 15, True, NOW)


async def test_a_server_that_refuses_tools_gets_the_json_action_protocol(scenes: Path) -> None:
    model = ScriptedChatModel(
        REFUSED,
        action("edit_file", path="work.md", old_text="a nurse.", new_text="a nurse on night shifts."),
        DONE,
    )
    writer = LLMSceneWriter(model, PersonaSettings())

    await writer.consolidate(request(scenes))

    assert (scenes / "work.md").read_text() == "# Work\n\nAnn is a nurse on night shifts.\n"
    assert [bool(c.tools) for c in model.calls] == [True, False, False]
    assert model.calls[1].schema == ACTION_SCHEMA
    assert '"tool": "<name>"' in model.calls[1].messages[0].content
    assert (
        model.calls[2].messages[-1].content.startswith("TOOL RESULT (edit_file): wrote scene_blocks/work.md")
    )
    assert writer.tool_calling == "json"
    assert writer.degradations.snapshot() == {"tool_protocol_json": 1}

    model.enqueue(DONE)
    await writer.consolidate(request(scenes))
    assert not model.calls[-1].tools  # not probed again


async def test_the_sandbox_holds_under_the_json_protocol(scenes: Path) -> None:
    model = ScriptedChatModel(
        action("write_file", path="../../outside.md", content="pwned"),
        action("read_file", path="/etc/passwd"),
        DONE,
    )
    await LLMSceneWriter(model, PersonaSettings(), tool_calling="json").consolidate(request(scenes))

    assert (scenes.parent.parent.parent / "outside.md").read_text() == "outside\n"
    results = [m.content for c in model.calls for m in c.messages[-1:] if m.content.startswith("TOOL RESULT")]
    assert len(results) == 2 and all(": error: " in r for r in results)


async def test_a_native_writer_that_is_refused_tools_fails_cleanly(scenes: Path) -> None:
    with pytest.raises(ToolsUnsupportedError):
        await LLMSceneWriter(
            ScriptedChatModel(REFUSED), PersonaSettings(), tool_calling="native"
        ).consolidate(request(scenes))


async def test_an_action_written_as_text_on_a_tool_server_is_run_and_counted(scenes: Path) -> None:
    model = ScriptedChatModel(
        "Sure! " + action("write_file", path="night-shifts.md", content="# Night shifts\n"),
        "All done.",
    )
    writer = LLMSceneWriter(model, PersonaSettings())

    await writer.consolidate(request(scenes))

    assert (scenes / "night-shifts.md").read_text() == "# Night shifts\n"
    assert writer.degradations.snapshot() == {"text_tool_calls": 1}
    assert writer.tool_calling == "auto"


async def test_json_about_something_else_is_no_action() -> None:
    assert json_actions.actions_in('{"summary": "work", "heat": 3}', {"write_file"}) is None
    assert json_actions.actions_in("I changed nothing.", {"write_file"}) is None
    calls, summary = json_actions.actions_in(DONE, {"write_file"}) or ([], None)
    assert (calls, summary) == ([], "added the night shifts")


async def test_a_reply_with_native_tool_calls_is_unchanged(scenes: Path) -> None:
    model = ScriptedChatModel(
        ChatReply("", tool_calls=(ToolCall("c1", "read_file", '{"path": "work.md"}'),)),
        "Read it; nothing to change.",
    )
    await LLMSceneWriter(model, PersonaSettings()).consolidate(request(scenes))
    assert model.calls[1].messages[-1].role == "tool"
    assert "Ann is a nurse." in model.calls[1].messages[-1].content


def test_the_json_action_schema_names_only_the_tools_and_their_arguments() -> None:
    props = ACTION_SCHEMA.schema["properties"]
    assert props["tool"]["enum"] == ["list_files", "read_file", "write_file", "edit_file", "done"]
    assert set(props["arguments"]["properties"]) == {"path", "content", "old_text", "new_text"}
    assert props["arguments"]["additionalProperties"] is False
