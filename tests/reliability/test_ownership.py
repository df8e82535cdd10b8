"""One writer per data directory; readers open read-only, never recover and never write."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memstrata import DirectoryLockedError, Memory, ReadOnlyError
from memstrata.stores.sqlite.ownership import OWNER

HOLD = """
import sys, time
from pathlib import Path
from memstrata import Memory
mem = Memory.open(sys.argv[1], embedder=None)
mem.capture([{"role": "user", "content": "I keep bees on the roof."}], session_key="s", user_id="ann")
Path(sys.argv[2]).touch()
until = time.monotonic() + float(sys.argv[3])
while time.monotonic() < until and not Path(sys.argv[4]).exists():
    time.sleep(0.01)
mem.close()
"""


def hold_in_child(home: Path, tmp_path: Path, seconds: float) -> subprocess.Popen[bytes]:
    """A child process holding ``home`` for ``seconds``, or until ``tmp_path/go`` exists."""
    ready = tmp_path / "ready"
    go = tmp_path / "go"
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(home), str(ready), str(seconds), str(go)])
    deadline = time.monotonic() + 30
    while not ready.exists():
        assert child.poll() is None, "the writer process died"
        assert time.monotonic() < deadline, "the writer process did not start"
        time.sleep(0.05)
    return child


def test_a_second_writer_gets_a_clear_error_naming_the_holder(home: Path, tmp_path: Path) -> None:
    child = hold_in_child(home, tmp_path, 30)
    try:
        with pytest.raises(DirectoryLockedError) as caught:
            Memory.open(home, embedder=None)
        assert caught.value.holder["pid"] == child.pid
        assert f"pid {child.pid}" in str(caught.value) and "--wait" in str(caught.value)
    finally:
        child.kill()
        child.wait()


def test_a_second_writer_may_wait_for_the_first(home: Path, tmp_path: Path) -> None:
    child = hold_in_child(home, tmp_path, 60)  # until told to go: no race with a slow machine
    seen: list[list[str]] = []
    opened_at: list[float] = []

    def second_writer() -> None:
        with Memory.open(home, embedder=None, wait=30) as mem:
            opened_at.append(time.monotonic())
            seen.append([m.content for m in mem.messages(user_id="ann")])

    waiting = threading.Thread(target=second_writer)
    waiting.start()
    try:
        time.sleep(0.3)  # time to start waiting; it cannot open while the child holds the directory
        assert not opened_at
        released = time.monotonic()
        (tmp_path / "go").touch()
        waiting.join(30)
        assert seen == [["I keep bees on the roof."]] and opened_at[0] > released
        assert child.wait(10) == 0
    finally:
        (tmp_path / "go").touch()
        waiting.join(30)
        if child.poll() is None:
            child.kill()
            child.wait()


def test_a_killed_writer_leaves_no_lock_behind(home: Path, tmp_path: Path) -> None:
    child = hold_in_child(home, tmp_path, 30)
    child.kill()
    child.wait()
    assert (home / OWNER).exists()  # its record is stale, its lock died with it
    with Memory.open(home, embedder=None) as mem:
        assert mem.messages(user_id="ann")


def test_two_memories_in_one_process_do_not_share_the_directory(home: Path) -> None:
    with Memory.open(home, embedder=None), pytest.raises(DirectoryLockedError):
        Memory.open(home, embedder=None)


def fingerprint(home: Path) -> dict[str, str]:
    """Every file's hash, but SQLite's shared-memory index (readers record their marks there)."""
    return {
        str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(home.rglob("*"))
        if p.is_file() and not p.name.endswith("-shm")
    }


def test_a_reader_beside_a_writer_writes_nothing(home: Path, tmp_path: Path) -> None:
    with Memory.open(home, embedder=None) as writer:
        writer.capture(
            [{"role": "user", "content": "My sister Lena moved to Oslo."}], session_key="s", user_id="ann"
        )
        writer.run_all()
        before = fingerprint(home)
        for args in (["search", "Oslo", "--user", "ann"], ["recall", "Lena?", "--user", "ann"], ["status"]):
            done = subprocess.run(
                [sys.executable, "-m", "memstrata.cli", "--data-dir", str(home), *args],
                capture_output=True,
                text=True,
                env={**os.environ, "MEMSTRATA_EMBEDDING__PROVIDER": "none"},
            )
            assert done.returncode == 0, done.stderr
        assert fingerprint(home) == before
        writer.capture([{"role": "user", "content": "Lena has a cat."}], session_key="s", user_id="ann")


def test_a_read_only_memory_refuses_writes_and_runs_no_pipeline(home: Path) -> None:
    with Memory.open(home, embedder=None) as writer:
        writer.capture([{"role": "user", "content": "I teach piano."}], session_key="s", user_id="ann")
    with Memory.open(home, embedder=None, read_only=True) as reader:
        assert reader.read_only
        assert [m.content for m in reader.messages(user_id="ann")] == ["I teach piano."]
        with pytest.raises(ReadOnlyError):
            reader.capture([{"role": "user", "content": "x y z"}], session_key="s", user_id="ann")
        with pytest.raises(ReadOnlyError):
            reader.run_all()


def test_reading_a_directory_that_holds_nothing_says_so(tmp_path: Path) -> None:
    from memstrata import StoreError

    with pytest.raises(StoreError, match="nothing has been stored there yet"):
        Memory.open(tmp_path / "nothing", read_only=True)
    assert not (tmp_path / "nothing").exists()
