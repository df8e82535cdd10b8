"""A full disk and read-only folders: one ``StorageError`` line naming the path and the cause,
reads keep working, and nothing is lost once the disk takes writes again.

The disk is a real tmpfs of a few hundred KB, and read-only folders are real read-only mounts
(``tests/support/disks.py``; as root, file modes would not stop a write)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memstrata import FakeClock, Memory
from memstrata.errors import StorageError
from memstrata.models import Message, MessageFilter, Role, Tenant
from memstrata.stores.files.atomic import atomic_write
from memstrata.stores.sqlite.store import SqliteStore
from tests.support.disks import fill, read_only, small_disk

FACTS = [
    "I love hiking in the Alps with my sister Ana.",
    "I work as a nurse at the children's hospital in Porto.",
    "My cat Miso is afraid of the vacuum cleaner.",
    "Please keep your answers short.",
]


def turn(i: int) -> dict[str, object]:
    # Incompressible padding, so the disk fills in a few dozen messages.
    return {
        "role": "user",
        "name": "Ann",
        "id": f"m{i}",
        "content": f"{FACTS[i % 4]} {os.urandom(1500).hex()}",
    }


def capture_until_full(mem: Memory) -> list[str]:
    """Capture one message at a time until the disk refuses; the ids that were accepted."""
    accepted: list[str] = []
    for i in range(1000):
        try:
            mem.capture([turn(i)], session_key="s")
        except StorageError:
            return accepted
        accepted.append(f"m{i}")
    raise AssertionError("the disk never filled")


def test_a_full_disk_fails_a_capture_with_one_line_and_nothing_is_lost_once_space_returns(
    tmp_path: Path, clock: FakeClock
) -> None:
    with small_disk(tmp_path / "disk", "1m") as disk:
        home = disk.path / "mem"
        mem = Memory.open(home, clock=clock, embedder=None)
        accepted = capture_until_full(mem)
        with pytest.raises(StorageError) as caught:  # the disk is still full: the same error again
            mem.capture([turn(len(accepted))], session_key="s")
        error = caught.value
        assert "\n" not in str(error) and "the disk is full" in str(error)
        assert error.path.startswith(str(home)) and str(error).startswith(f"cannot write {error.path}")
        assert 5 < len(accepted) < 1000

        # Reads keep working on the full disk, in this process and in a read-only one.
        assert [m.id for m in mem.messages(limit=2000)] == accepted
        assert mem.search("hiking Alps", layers=("L0",)).hits
        reader = SqliteStore(home, read_only=True)
        assert reader.messages.count(None) == len(accepted)
        reader.close()

        disk.resize("32m")
        failed = f"m{len(accepted)}"
        mem.capture([turn(len(accepted))], session_key="s")  # the caller retries what failed
        mem.run_all()
        mem.close()

        again = Memory.open(home, clock=clock, embedder=None)
        assert [m.id for m in again.messages(limit=2000)] == [*accepted, failed]
        assert again.atoms(limit=2000)
        assert all(s.last_error is None for s in again.status().sessions)
        again.close()
        store = SqliteStore(home)
        assert store.mirror_check() is None  # the mirrors caught up with everything
        store.close()


def test_the_cli_reports_a_full_disk_in_one_line_and_a_second_import_completes(tmp_path: Path) -> None:
    seed = tmp_path / "seed.json"
    conversations = [[turn(i) | {"timestamp": 1_770_000_000_000 + i} for i in range(60)]]
    seed.write_text(json.dumps({"sessions": [{"sessionKey": "s", "conversations": conversations}]}))
    exe = Path(sys.executable).parent / "memstrata"
    env = {**os.environ, "MEMSTRATA_EMBEDDING__PROVIDER": "none"}
    with small_disk(tmp_path / "disk", "2m") as disk:
        home = disk.path / "mem"
        SqliteStore(home).close()
        ballast = fill(disk.path, leave=100_000)
        cmd = [str(exe), "--data-dir", str(home), "import", str(seed)]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 1
        errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
        assert len(errors) == 1 and "the disk is full" in errors[0] and str(home) in errors[0], r.stderr
        assert "Traceback" not in r.stderr

        ballast.unlink()
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        store = SqliteStore(home)
        assert store.messages.count(None) == 60
        assert store.mirror_check() is None
        store.close()


def test_read_only_profiles_are_an_error_in_status_and_reads_keep_working(
    home: Path, clock: FakeClock
) -> None:
    with Memory.open(home, clock=clock, embedder=None) as mem:
        mem.capture([turn(i) for i in range(4)], session_key="s")
        mem.run_all()
        persona_before = mem.persona()
        assert persona_before is not None
        with read_only(home / "profiles"):
            mem.capture(
                [{"role": "user", "name": "Ann", "content": "I started learning the cello."}], session_key="s"
            )
            mem.run_all()  # no exception: the failure is the tenant's, recorded
            (st,) = mem.status().tenants
            assert (
                st.l2_error is not None
                and "read-only" in st.l2_error
                and str(home / "profiles") in st.l2_error
            )
            assert "\n" not in st.l2_error
            recalled = mem.recall("hiking", user_id="default")
            assert "<user-persona>" in recalled.system_context
            assert mem.persona() == persona_before
        clock.advance(60)
        mem.run_all()
        (st,) = mem.status().tenants
        assert st.l2_error is None and st.l2_attempts == 0
        assert any("cello" in a.content for a in mem.atoms())
        cello = [a.id for a in mem.atoms() if "cello" in a.content]
        assert set(cello) <= {i for e in mem.scenes() for i in e.atom_ids}


def test_a_read_only_mirror_folder_catches_up_when_writable_again(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    store.messages.append([_msg("m0")])
    with read_only(tmp_path / "conversations"):
        store.messages.append([_msg("m1"), _msg("m2")])  # committed; the mirror cannot follow
        note = store.mirror_check()
        assert note is not None and "2 records missing" in note and "read-only" in note
    store.messages.append([_msg("m3")])
    assert store.mirror_check() is None
    store.close()


def test_a_read_only_data_dir_opens_for_reading_and_refuses_a_writer_in_one_line(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", "8m") as disk:
        home = disk.path / "mem"
        with Memory.open(home, embedder=None) as mem:
            mem.capture([turn(i) for i in range(4)], session_key="s")
            mem.run_all()
        disk.read_only()
        reader = SqliteStore(home, read_only=True)
        assert reader.messages.count(None) == 4 and reader.atoms.count(None) > 0
        assert reader.index.keyword(Tenant(), MessageFilter(), ["hiking"], 5)
        reader.close()
        with pytest.raises(StorageError, match="read-only") as caught:
            SqliteStore(home)
        assert "\n" not in str(caught.value) and caught.value.path.startswith(str(home))


def test_atomic_write_on_a_full_disk_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", "256k") as disk:
        target = disk.path / "persona.md"
        atomic_write(target, "old persona")
        fill(disk.path)
        with pytest.raises(StorageError, match="the disk is full") as caught:
            atomic_write(target, "x" * 200_000)
        assert caught.value.path == str(target)
        assert target.read_text() == "old persona"
        assert sorted(p.name for p in disk.path.iterdir()) == ["ballast.bin", "persona.md"]


def _msg(mid: str) -> tuple[Message, str]:
    m = Message(mid, Tenant(), "s", "s", Role.USER, f"text {mid}", 1_000, 1_000, "Ann")
    return m, m.content


def test_a_capture_whose_schedule_cannot_be_saved_keeps_its_messages_and_says_so(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills between the messages' commit and the scheduler's counter: the caller is told
    the messages are stored (a retry would only find duplicates), and L1 still reaches them."""
    from memstrata.stores.sqlite.pipeline import SqlitePipelineState

    def full(*_: object, **__: object) -> None:
        raise StorageError(str(tmp_path / "mem" / "memstrata.db"), "the disk is full")

    with Memory.open(tmp_path / "mem", clock=clock, embedder=None) as mem:
        with monkeypatch.context() as patched:
            patched.setattr(SqlitePipelineState, "update_session", full)
            result = mem.capture([turn(0)], session_key="s")
        assert [m.id for m in result.stored] == ["m0"]
        assert any("schedule" in d and "the disk is full" in d for d in result.degradations)
        assert [m.id for m in mem.messages()] == ["m0"]
        mem.run_all()  # the backlog is read from the messages: L1 still finds the turn
        assert mem.atoms()
