"""``run_all`` and imports report what happened: runs, failures and atoms made, never a success
count for a run that failed (the LLM engine's scripted model plays a good and a broken server)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from memstrata import FakeClock, Memory
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.interchange import ImportSession
from memstrata.llm.scripted import ScriptedChatModel
from memstrata.models import ChatMessage, ChatReply, NewMessage, Role, Tenant, ToolCall

EXTRACTED = json.dumps(
    {
        "scenes": [
            {
                "scene_name": "food",
                "memories": [
                    {"content": "Maya is allergic to peanuts.", "type": "persona", "priority": 90},
                    {"content": "Maya lives in Lisbon.", "type": "persona"},
                ],
            }
        ]
    }
)
MESSAGES = [NewMessage(Role.USER, "I'm allergic to peanuts and I live in Lisbon.", name="Maya")]


def writer(messages: Sequence[ChatMessage]) -> ChatReply:
    """L2 and L3 as an obedient model: writes persona.md when asked for it, else changes nothing."""
    if "persona.md" in messages[0].content[:40] and messages[-1].role != "tool":
        args = json.dumps(
            {"path": "persona.md", "content": "# Persona\n\n## Maya\n- Health: allergic to peanuts\n"}
        )
        return ChatReply("", tool_calls=(ToolCall("p1", "write_file", args),))
    return ChatReply("Nothing to change.")


def open_memory(home: Path, model: ScriptedChatModel) -> Memory:
    return Memory.open(home, clock=FakeClock(), embedder=HashingEmbedder(64), chat_model=model)


def test_run_all_counts_the_atoms_l1_made(tmp_path: Path) -> None:
    model = ScriptedChatModel(EXTRACTED, responder=writer)
    with open_memory(tmp_path / "data", model) as mem:
        mem.capture(MESSAGES, session_key="s1", user_id="maya")
        report = mem.run_all()
    assert (report.l1, report.l1_failed, report.atoms) == (1, 0, 2)
    assert report.upper >= 1 and report.ok


def test_a_failed_l1_run_is_reported_as_failed_not_done(tmp_path: Path) -> None:
    model = ScriptedChatModel(responder=lambda _: "Sorry, I can only chat.")
    with open_memory(tmp_path / "data", model) as mem:
        mem.capture(MESSAGES, session_key="s1", user_id="maya")
        report = mem.run_all()
        [session] = mem.status().sessions
    assert (report.l1, report.l1_failed, report.atoms, report.upper) == (1, 1, 0, 0)
    assert not report.ok
    assert session.last_error is not None and "no JSON value" in session.last_error


def test_an_import_reports_sessions_extracted_failed_and_atoms(tmp_path: Path) -> None:
    replies = iter([EXTRACTED, "prose, no JSON"])
    model = ScriptedChatModel(responder=lambda _: next(replies, "Nothing to change."))
    sessions = [
        ImportSession(Tenant("maya"), "s1", "s1", tuple(MESSAGES)),
        ImportSession(
            Tenant("maya"), "s2", "s2", (NewMessage(Role.USER, "I started pottery classes.", name="Maya"),)
        ),
    ]
    stages: list[tuple[str, int, int]] = []
    with open_memory(tmp_path / "data", model) as mem:
        report = mem.import_sessions(sessions, on_progress=lambda *a: stages.append(a))
    assert (report.extracted, report.atoms) == (1, 2)
    assert report.failed >= 1
    assert ("L1 extraction", 1, 2) in stages and ("L1 extraction failed", 1, 2) in stages
    assert ("L1 extraction", 2, 2) not in stages
