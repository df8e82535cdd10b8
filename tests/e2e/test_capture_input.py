"""Bad or careless input to capture and import: a clear error and nothing written, or a result that
says exactly what happened to every message. Never a silent drop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memstrata import InputError, Memory
from memstrata.cli.main import app
from memstrata.interchange import parse_import

runner = CliRunner()


def msg(content: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, **extra}


@pytest.mark.parametrize("field", ["user_id", "agent_id", "session_key"])
def test_none_for_a_tenant_or_session_is_an_error_not_a_silent_drop(
    keyword_memory: Memory, field: str
) -> None:
    with pytest.raises(InputError, match=field):
        keyword_memory.capture([msg("I live in Lyon.")], **{field: None})  # type: ignore[arg-type]
    assert keyword_memory.status().messages == 0


def test_empty_tenant_names_are_refused_everywhere(keyword_memory: Memory) -> None:
    with pytest.raises(InputError, match="user_id"):
        keyword_memory.search("Lyon", user_id="")
    with pytest.raises(InputError, match="agent_id"):
        keyword_memory.recall("Lyon", agent_id=" ")


def test_a_repeated_id_in_one_input_is_reported_and_the_first_kept(keyword_memory: Memory) -> None:
    r = keyword_memory.capture([msg("first", id="x"), msg("second", id="x"), msg("third", id="y")])
    assert [m.content for m in r.stored] == ["first", "third"]
    assert r.repeated == ("x",)
    assert any("1 duplicate ids in the input" in d and "x" in d for d in r.degradations)


@pytest.mark.parametrize(
    ("timestamp", "why"),
    [
        (1e20, "out of range"),
        (3 * 10**14, "out of range"),
        ("yesterday", "ISO 8601"),
        (-5, "out of range"),
        (float("nan"), "not a valid"),
        (True, "expected"),
    ],
)
def test_a_bad_timestamp_anywhere_in_the_call_stores_nothing(
    keyword_memory: Memory, timestamp: object, why: str
) -> None:
    with pytest.raises(InputError, match=rf"messages\[1\]\.timestamp.*{why}"):
        keyword_memory.capture([msg("fine", timestamp=1_700_000_000_000), msg("bad", timestamp=timestamp)])
    assert keyword_memory.status().messages == 0


def test_times_in_seconds_and_iso_are_read_like_the_importer_reads_them(keyword_memory: Memory) -> None:
    r = keyword_memory.capture(
        [msg("a", timestamp=1_700_000_000), msg("b", timestamp="2023-11-14T22:13:20Z")], session_key="t"
    )
    assert [m.timestamp for m in r.stored] == [1_700_000_000_000, 1_700_000_000_000]


def test_an_oversized_message_is_stored_cut_with_a_note(home: Path) -> None:
    with Memory.open(home, embedder=None, capture={"max_message_chars": 1000}) as mem:
        r = mem.capture([msg("word " * 1000)])
        assert len(r.stored[0].content) < 1200
        assert "more characters not stored" in r.stored[0].content
        assert any("cut to 1000 characters" in d for d in r.degradations)


def seed_file(tmp_path: Path, sessions: list[dict[str, Any]]) -> Path:
    path = tmp_path / "seed.json"
    path.write_text(json.dumps({"sessions": sessions}))
    return path


def test_reimporting_a_seed_file_without_ids_or_times_stores_nothing(tmp_path: Path) -> None:
    seed = seed_file(
        tmp_path,
        [
            {
                "sessionKey": "s1",
                "conversations": [[msg("I adopted a cat."), {"role": "assistant", "content": "Nice!"}]],
            }
        ],
    )
    home = tmp_path / "mem"
    for expected in ("2 messages stored", "0 messages stored, 2 already present"):
        done = runner.invoke(app, ["--data-dir", str(home), "import", str(seed), "--no-process"])
        assert done.exit_code == 0, done.output
        assert expected in done.output
    with Memory.open(home, embedder=None, read_only=True) as mem:
        assert mem.status().messages == 2


def test_a_bad_time_in_a_later_session_of_a_file_stores_nothing(tmp_path: Path) -> None:
    seed = seed_file(
        tmp_path,
        [
            {"sessionKey": "s1", "conversations": [[msg("good one")]]},
            {"sessionKey": "s2", "conversations": [[msg("bad one", timestamp=1e20)]]},
        ],
    )
    done = runner.invoke(app, ["--data-dir", str(tmp_path / "mem"), "import", str(seed)])
    assert done.exit_code == 1
    assert "sessions[1].conversations[0][0].timestamp" in done.output
    assert not (tmp_path / "mem" / "memstrata.db").exists()


def test_api_and_importer_share_one_time_rule() -> None:
    sessions = parse_import(
        {"sessions": [{"sessionKey": "s", "conversations": [[msg("x", timestamp=1_700_000_000)]]}]}
    )
    assert sessions[0].messages[0].timestamp == 1_700_000_000_000
    with pytest.raises(InputError, match="out of range"):
        parse_import({"sessions": [{"sessionKey": "s", "conversations": [[msg("x", timestamp=-5)]]}]})
