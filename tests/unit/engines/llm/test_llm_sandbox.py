"""The LLM engine's L2/L3 tool loop: sandbox escapes, limits, edits, persona requests.

A scripted model plays the attacker; each attempt must come back as ``error: ...`` and nothing
outside the sandbox may change.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from memstrata.engines.llm.l2 import LLMSceneWriter
from memstrata.engines.llm.l3 import LLMPersonaWriter
from memstrata.errors import EngineError
from memstrata.llm.scripted import ScriptedChatModel
from memstrata.models import (
    Atom,
    AtomType,
    ChatMessage,
    ChatReply,
    ResponseSchema,
    Tenant,
    ToolCall,
    ToolSpec,
)
from memstrata.ports import ConsolidationRequest, PersonaRequest
from memstrata.settings import PersonaSettings
from memstrata.stores.files.folder import DirectoryFolder

NOW = 1_785_405_720_000


def call(name: str, **args: object) -> ToolCall:
    return ToolCall(f"c-{name}-{len(json.dumps(args)) % 997}", name, json.dumps(args))


def tools(*calls: ToolCall) -> ChatReply:
    return ChatReply("", tool_calls=calls)


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every path under ``root``: file bytes, or the target of a symlink."""
    out: dict[str, bytes | str] = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = f"-> {os.readlink(p)}"
        elif p.is_file():
            out[rel] = p.read_bytes()
    return out


def answers(model: ScriptedChatModel, turn: int) -> list[str]:
    return [m.content for m in model.calls[turn].messages if m.role == "tool"]


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    """A tenant folder with persona.md, scene_blocks/work.md and a symlink pointing outside."""
    folder = tmp_path / "profiles" / "u=ann,a=default"
    (folder / "scene_blocks").mkdir(parents=True)
    (folder / "persona.md").write_text("# Ann\n")
    (folder / "scene_blocks" / "work.md").write_text("# Work\n\nAnn is a nurse.\n")
    (tmp_path / "outside.md").write_text("outside\n")
    os.symlink(tmp_path / "outside.md", folder / "scene_blocks" / "link.md")
    return folder


def request(folder: Path, max_scenes: int = 15) -> ConsolidationRequest:
    atom = Atom("a1", Tenant("ann"), AtomType.PERSONA, "Ann works night shifts.", 60, "work", seq=1)
    scenes = DirectoryFolder(folder)
    return ConsolidationRequest(Tenant("ann"), scenes, (atom,), (), {}, {}, max_scenes, True, NOW)


async def test_every_escape_attempt_gets_an_error_and_nothing_outside_changes(profile: Path) -> None:
    root = profile.parent.parent
    scenes = profile / "scene_blocks"
    before = snapshot(root)
    attacks = [
        call("read_file", path="../persona.md"),
        call("write_file", path="../persona.md", content="pwned"),
        call("read_file", path="/etc/passwd"),
        call("write_file", path=str(root / "outside.md"), content="pwned"),
        call("read_file", path="link.md"),
        call("write_file", path="link.md", content="pwned"),
        call("edit_file", path="link.md", old_text="outside", new_text="pwned"),
        call("write_file", path="scene_blocks/../../x.md", content="pwned"),
        call("write_file", path="x\0.md", content="pwned"),
        call("write_file", path="big.md", content="x" * 10_000_000),
        call("write_file", path="notes.txt", content="pwned"),
        call("write_file", path=".hidden.md", content="pwned"),
    ]
    model = ScriptedChatModel(tools(*attacks), ChatReply("done"))
    result = await LLMSceneWriter(model, PersonaSettings()).consolidate(request(scenes))
    replies = answers(model, 1)
    assert len(replies) == len(attacks)
    assert all(r.startswith("error:") for r in replies), replies
    assert "10000000 bytes exceed" in replies[9] and "NUL" in replies[8] and "symlink" in replies[4]
    assert snapshot(root) == before
    assert result.persona_requests == ()


async def test_the_persona_writer_may_touch_persona_md_alone(profile: Path) -> None:
    before_scenes = snapshot(profile / "scene_blocks")
    model = ScriptedChatModel(
        tools(
            call("read_file", path="scene_blocks/work.md"),
            call("write_file", path="other.md", content="x"),
            call("write_file", path="../persona.md", content="x"),
            call("write_file", path="persona.md", content="# Ann\n\nAnn is a nurse who works nights.\n"),
        ),
        ChatReply("updated"),
    )
    folder = DirectoryFolder(profile, only="persona.md")
    req = PersonaRequest(Tenant("ann"), folder, "# Ann", False, (), (), (), (), NOW)
    body = await LLMPersonaWriter(model, PersonaSettings()).write(req)
    replies = answers(model, 1)
    assert [r.startswith("error:") for r in replies] == [True, True, True, False]
    assert body == "# Ann\n\nAnn is a nurse who works nights."
    assert snapshot(profile / "scene_blocks") == before_scenes


async def test_edit_file_replaces_exactly_one_occurrence(profile: Path) -> None:
    scenes = profile / "scene_blocks"
    (scenes / "pets.md").write_text("cat cat dog\n")
    model = ScriptedChatModel(
        tools(
            call("edit_file", path="pets.md", old_text="cat", new_text="lion"),
            call("edit_file", path="pets.md", old_text="bird", new_text="lion"),
            call("edit_file", path="scene_blocks/pets.md", old_text="dog", new_text="wolf"),
        ),
        ChatReply("ok"),
    )
    await LLMSceneWriter(model, PersonaSettings()).consolidate(request(scenes))
    replies = answers(model, 1)
    assert (
        "occurs 2 times" in replies[0] and "occurs 0 times" in replies[1] and replies[2].startswith("wrote")
    )
    assert (scenes / "pets.md").read_text() == "cat cat wolf\n"


async def test_one_new_scene_per_batch_and_none_beyond_max_scenes(profile: Path) -> None:
    scenes = profile / "scene_blocks"
    model = ScriptedChatModel(
        tools(call("write_file", path="a.md", content="# A"), call("write_file", path="b.md", content="# B")),
        ChatReply("ok"),
    )
    await LLMSceneWriter(model, PersonaSettings()).consolidate(request(scenes))
    assert answers(model, 1)[1].startswith("error: one new scene per batch")
    assert (scenes / "a.md").exists() and not (scenes / "b.md").exists()

    full = ScriptedChatModel(tools(call("write_file", path="c.md", content="# C")), ChatReply("ok"))
    await LLMSceneWriter(full, PersonaSettings()).consolidate(request(scenes, max_scenes=2))
    assert "merge 2-4 similar scenes first" in answers(full, 1)[0]
    assert not (scenes / "c.md").exists()


async def test_the_loop_stops_after_the_step_limit_and_keeps_what_was_written(profile: Path) -> None:
    scenes = profile / "scene_blocks"
    model = ScriptedChatModel(
        tools(call("write_file", path="work.md", content="# Work v2")),
        responder=lambda _: tools(call("list_files")),
    )
    settings = PersonaSettings(tool_max_steps=20)
    await LLMSceneWriter(model, settings).consolidate(request(scenes))
    assert len(model.calls) == 20  # one tool call per reply, 20 steps
    assert (scenes / "work.md").read_text() == "# Work v2"


class SlowModel:
    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        schema: ResponseSchema | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> ChatReply:
        await asyncio.sleep(30)
        return ChatReply("late")


async def test_a_loop_that_runs_out_of_time_is_an_engine_error(profile: Path) -> None:
    settings = PersonaSettings(tool_timeout_seconds=0.05)
    with pytest.raises(EngineError, match="did not finish"):
        await LLMSceneWriter(SlowModel(), settings).consolidate(request(profile / "scene_blocks"))


async def test_a_persona_update_request_in_the_reply_is_returned(profile: Path) -> None:
    model = ScriptedChatModel(
        tools(call("edit_file", path="work.md", old_text="nurse", new_text="head nurse")),
        ChatReply("Updated work.md.\n[PERSONA_UPDATE_REQUEST]Ann was promoted\n[/PERSONA_UPDATE_REQUEST]"),
    )
    result = await LLMSceneWriter(model, PersonaSettings()).consolidate(request(profile / "scene_blocks"))
    assert result.persona_requests == ("Ann was promoted",)
    assert {t.name for t in model.calls[0].tools} == {"list_files", "read_file", "write_file", "edit_file"}


async def test_bad_tool_arguments_and_unknown_tools_are_errors_not_crashes(profile: Path) -> None:
    model = ScriptedChatModel(
        tools(ToolCall("1", "write_file", "{not json"), ToolCall("2", "rm_rf", "{}"), call("read_file")),
        ChatReply("ok"),
    )
    writer = LLMSceneWriter(model, PersonaSettings())
    await writer.consolidate(request(profile / "scene_blocks"))
    assert all(r.startswith("error:") for r in answers(model, 1))
    assert writer.degradations.snapshot() == {"tool_call_errors": 3}  # status shows them
