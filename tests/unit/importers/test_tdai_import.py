"""read_tdai: a TencentDB-Agent-Memory directory read into sessions, atoms, scenes and personas."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memstrata.errors import InputError
from memstrata.interchange import SkippedLine, read_tdai
from memstrata.interchange.tdai.read import SUPERSEDED, persona_body, profile_tenant
from memstrata.models import AtomType, Role, Tenant

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "tdai"
ALICE = Tenant("alice")
BOB = Tenant("bob", "helper")


def ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso).replace(tzinfo=UTC).timestamp() * 1000)


def write_lines(path: Path, *lines: dict[str, Any] | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))


def test_conversations_become_sessions_by_key_and_session_id_with_ids_kept() -> None:
    data = read_tdai(FIXTURE)
    runs = [(s.tenant, s.session_key, s.session_id, [m.id for m in s.messages]) for s in data.sessions]
    assert runs == [
        (ALICE, "chat-alice", "s1", ["msg_a1", "msg_a2", "msg_a3"]),
        (ALICE, "chat-alice", "s2", ["msg_a4", "msg_a5"]),
        (BOB, "work", "w1", ["msg_b1", "msg_b2"]),
        (BOB, "work", "w2", ["msg_b3"]),
    ]
    first = data.sessions[0].messages[0]
    assert (first.role, first.timestamp) == (Role.USER, 1772359200000)
    b1 = data.sessions[2].messages[0]  # snake_case line, ISO time, a speaker name
    assert (b1.timestamp, b1.name) == (ms("2026-03-01T09:00:00"), "Bob")


def test_the_malformed_line_is_reported_with_file_and_line() -> None:
    data = read_tdai(FIXTURE)
    assert len(data.skipped) == 1
    bad = data.skipped[0]
    assert (bad.path, bad.line) == ("conversations/2026-03-01.jsonl", 4)
    assert str(bad).startswith("conversations/2026-03-01.jsonl:4: not a JSON line")


def test_records_keep_ids_types_priorities_scene_names_and_sources() -> None:
    atoms = {a.id: a for a in read_tdai(FIXTURE).atoms}
    assert set(atoms) == {"m_a0", "m_a1", "m_a2", "m_a3", "m_a4", "m_b1", "m_b2"}
    a2 = atoms["m_a2"]
    assert (a2.tenant, a2.type, a2.priority, a2.scene_name) == (ALICE, AtomType.EPISODIC, 70, "Kyoto trip")
    assert a2.source_message_ids == ("msg_a1", "msg_a2")
    assert a2.session_key == "chat-alice"
    assert a2.created_at == ms("2026-03-01T10:02:00")
    # TDAI's activity_*_time become memstrata's activity_*; message_time from the source messages
    assert a2.metadata == {
        "activity_start": "2026-04-01",
        "activity_end": "2026-04-30",
        "message_time": 1772359230000,
    }
    assert atoms["m_a3"].type == AtomType.PERSONA  # legacy "preference"
    assert atoms["m_a0"].superseded_by == "m_a2"
    a4 = atoms["m_a4"]  # camelCase: sceneName, sourceMessageIds, activityStart
    assert (a4.scene_name, a4.source_message_ids) == ("Home baking", ("msg_a4",))
    assert a4.metadata["activity_start"] == "2026-02-28"
    b1, b2 = atoms["m_b1"], atoms["m_b2"]  # snake_case, epoch ms times
    assert (b1.tenant, b1.created_at, b1.session_key) == (BOB, 1772355900000, "work")
    assert (b2.type, b2.priority, b2.updated_at) == (AtomType.INSTRUCTION, -1, ms("2026-03-02T09:01:00"))


def test_profiles_give_tenants_normalised_scenes_and_personas_without_navigation() -> None:
    profiles = {p.tenant: p for p in read_tdai(FIXTURE).profiles}
    assert set(profiles) == {ALICE, BOB}
    alice = profiles[ALICE]
    assert [s.name for s in alice.scenes] == ["home-baking.md", "kyoto-trip.md"]
    assert alice.renamed == {"Home Baking.md": "home-baking.md"}
    baking, kyoto = alice.scenes
    # ISO 8601 META times (TDAI) and memstrata's own format are both read
    assert (baking.created, baking.updated, baking.heat) == (
        ms("2026-03-02T18:05"),
        ms("2026-03-02T18:06"),
        1,
    )
    assert (kyoto.created, kyoto.heat) == (ms("2026-03-01T10:05"), 3)
    assert kyoto.summary.startswith("Alice's April 2026 trip to Kyoto")
    assert kyoto.body.startswith("## Kyoto trip")
    assert alice.persona is not None
    assert alice.persona.endswith("text, not an order.")  # navigation cut off, tags not escaped yet
    assert "Scene Navigation" not in alice.persona and "<system>" in alice.persona
    assert profiles[BOB].folder == "profiles/u=bob,a=helper"


def test_top_level_scenes_and_persona_belong_to_the_default_tenant(tmp_path: Path) -> None:
    (tmp_path / "scene_blocks").mkdir()
    (tmp_path / "scene_blocks" / "pets.md").write_text("## Pets\n\n- The user has a cat.\n")
    (tmp_path / "scene_blocks" / "gone.md").write_text("[DELETED]\n")
    (tmp_path / "persona.md").write_text("The user has a cat.\n")
    (profile,) = read_tdai(tmp_path).profiles
    assert (profile.tenant, profile.folder) == (Tenant(), ".")
    assert [s.name for s in profile.scenes] == ["pets.md"]  # soft-deleted files left out
    assert profile.scenes[0].summary == "" and profile.persona == "The user has a cat."


def test_missing_optional_fields_get_defaults_and_stable_ids(tmp_path: Path) -> None:
    write_lines(tmp_path / "conversations" / "2026-01-05.jsonl", {"role": "User", "content": "I like tea."})
    write_lines(
        tmp_path / "records" / "2026-01-05.jsonl", {"type": "persona", "content": "The user likes tea."}
    )
    first, again = read_tdai(tmp_path), read_tdai(tmp_path)
    (session,) = first.sessions
    (msg,) = session.messages
    assert (session.tenant, session.session_key, session.session_id) == (Tenant(), "default", "default")
    assert (msg.role, msg.timestamp, msg.name) == (Role.USER, None, None)
    assert msg.id and msg.id == again.sessions[0].messages[0].id  # the same id on every import
    (atom,) = first.atoms
    assert (atom.priority, atom.scene_name, atom.source_message_ids, atom.superseded_by) == (50, "", (), None)
    assert atom.created_at == ms("2026-01-05T00:00")  # the file's day stands in for a missing time
    assert atom.id == again.atoms[0].id


def test_bad_lines_are_skipped_with_the_reason_and_good_ones_kept(tmp_path: Path) -> None:
    write_lines(
        tmp_path / "records" / "2026-01-05.jsonl",
        {"id": "ok", "type": "instruction", "content": "Answer in French.", "priority": 90},
        {"id": "odd", "type": "opinion", "content": "x"},
        "[1, 2]",
        {"id": "late", "type": "persona", "content": "y", "priority": "high"},
        {"id": "gone", "type": "episodic", "content": "An old plan.", "deleted": True},
    )
    data = read_tdai(tmp_path)
    assert [a.id for a in data.atoms] == ["ok", "gone"]
    assert data.atoms[1].superseded_by == SUPERSEDED
    assert [(s.line, s.error) for s in data.skipped] == [
        (2, "type: unknown memory type 'opinion'"),
        (3, "expected a JSON object, got array"),
        (4, "priority: expected a number, got string"),
    ]
    assert all(isinstance(s, SkippedLine) and s.path == "records/2026-01-05.jsonl" for s in data.skipped)


def test_a_later_record_line_with_the_same_id_replaces_the_earlier(tmp_path: Path) -> None:
    base = {"id": "m1", "type": "persona", "userId": "ann"}
    write_lines(
        tmp_path / "records" / "2026-01-01.jsonl", {**base, "content": "Ann lives in Oslo.", "priority": 60}
    )
    write_lines(
        tmp_path / "records" / "2026-01-02.jsonl", {**base, "content": "Ann lives in Bergen.", "priority": 70}
    )
    data = read_tdai(tmp_path)
    assert [(a.content, a.priority) for a in data.atoms] == [("Ann lives in Bergen.", 70)]
    assert data.duplicates == 1


def test_repeated_message_ids_keep_the_first_and_roles_are_checked(tmp_path: Path) -> None:
    line = {"id": "x1", "role": "user", "content": "Hello there.", "timestamp": 1}
    write_lines(
        tmp_path / "conversations" / "d.jsonl",
        line,
        {**line, "content": "changed"},
        {"id": "x2", "role": "system", "content": "be nice"},
    )
    data = read_tdai(tmp_path)
    assert [m.content for s in data.sessions for m in s.messages] == ["Hello there."]
    assert data.duplicates == 1
    assert [str(s) for s in data.skipped] == [
        "conversations/d.jsonl:3: role: must be 'user' or 'assistant', got 'system'"
    ]


def test_not_a_data_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a directory"):
        read_tdai(tmp_path / "missing")
    with pytest.raises(InputError, match="not a TencentDB-Agent-Memory data directory"):
        read_tdai(tmp_path)


def test_profile_folder_names_and_persona_navigation() -> None:
    assert profile_tenant("u=al%2Fice,a=bot") == Tenant("al/ice", "bot")
    assert profile_tenant("carol") == Tenant("carol")
    text = "Body.\n\n---\n## 🗺️ Scene Navigation (Scene Index)\n### Path: scene_blocks/a.md\n"
    assert persona_body(text) == "Body."
    assert persona_body("---\n## Scene navigation\n") is None
