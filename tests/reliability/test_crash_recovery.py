"""SIGKILL during L1, then restart: nothing lost, nothing doubled, the same memory as a clean run.

A child process (``_crash_child.py``) captures a two-session LoCoMo conversation and runs L1 on it
with windows of 3 messages (about a dozen windows). The parent kills it with SIGKILL at a chosen
point, inspects a copy of the database as the kill left it (only whole windows are committed:
exactly the clean run's atoms up to each cursor), then reopens memory in this process, lets restart
recovery run the backlog, re-captures every session (idempotent) and ends each one. The result must
equal a clean run's: same messages, same atoms (contents, sources, supersessions), cursors at each
session's last message, no errors, keyword indexes and JSONL mirrors in step with the tables.
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memstrata import Memory
from memstrata.interchange.locomo import parse_locomo
from memstrata.interchange.sessions import ImportSession
from tests.conftest import LOCOMO

CHILD = Path(__file__).with_name("_crash_child.py")
# Small windows: many commits to interrupt. L2 kept far off: these runs are about L1.
PIPELINE: dict[str, Any] = {"window_size": 3, "l2_delay_after_l1_seconds": 86_400}
PACE = 0.05  # seconds the child sleeps per window when paced: room to poll between commits
TRIGGER_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class KillPoint:
    """Where to kill: at the child's hold marker, once ``atoms_fraction`` of the clean run's atoms
    are committed (paced, held before the last window as a backstop), or ``delay`` seconds after
    memory is open (unpaced: lands anywhere, commits and mirror appends included)."""

    name: str
    hold_first: bool = False
    atoms_fraction: float | None = None
    delay: float | None = None

    @property
    def must_interrupt(self) -> bool:
        """Deterministic points must catch L1 unfinished; timed ones may find the child done."""
        return self.delay is None


KILL_POINTS = [
    KillPoint("first-window-extracted", hold_first=True),
    KillPoint("quarter-of-atoms", atoms_fraction=0.25),
    KillPoint("two-thirds-of-atoms", atoms_fraction=0.65),
    KillPoint("unpaced-after-10ms", delay=0.01),
    KillPoint("unpaced-after-40ms", delay=0.04),
]


@dataclass(frozen=True, slots=True)
class DbState:
    """What the tables hold, read with plain sqlite3 (no memstrata code in the way)."""

    messages: list[tuple[int, str, str, str]]  # seq, id, session_key, content
    atoms: list[tuple[str, str, str, tuple[str, ...], str | None]]  # id, session, content, sources, by
    cursors: dict[str, int]
    fts_in_step: bool  # every record has its keyword-index row and no index row is orphaned
    integrity: str

    def seq_of(self) -> dict[str, int]:
        return {mid: seq for seq, mid, _, _ in self.messages}

    def atom_rows(self) -> set[tuple[str, str, tuple[str, ...]]]:
        return {(aid, content, sources) for aid, _, content, sources, _ in self.atoms}

    def atom_facts(self) -> list[tuple[str, str, tuple[str, ...], tuple[str, tuple[str, ...]] | None]]:
        """Atoms without ids: session, content, sources, and what superseded it (its content, sources)."""
        by_id = {aid: (content, sources) for aid, _, content, sources, _ in self.atoms}
        return [
            (key, content, sources, None if by is None else by_id[by])
            for _, key, content, sources, by in self.atoms
        ]


@dataclass(frozen=True, slots=True)
class CleanRun:
    input: Path
    sessions: list[ImportSession]
    state: DbState
    extract_calls: int


# --- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def conversation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``locomo_sample`` document (module-scoped copy: conv-26 cut to two sessions), or a
    synthetic LoCoMo-format conversation of the same shape when the data set is absent."""
    path = tmp_path_factory.mktemp("input") / "conversation.json"
    if LOCOMO.exists():
        sample = json.loads(LOCOMO.read_text())[0]
        conv = sample["conversation"]
        keep = {k: v for k, v in conv.items() if not k.startswith("session_")}
        for n in (1, 2):
            keep[f"session_{n}"] = conv[f"session_{n}"]
            keep[f"session_{n}_date_time"] = conv[f"session_{n}_date_time"]
        sample["conversation"] = keep
        path.write_text(json.dumps([sample]))
    else:
        path.write_text(json.dumps([synthetic_sample()]))
    return path


@pytest.fixture(scope="module")
def clean(conversation: Path, tmp_path_factory: pytest.TempPathFactory) -> CleanRun:
    """The same child run to completion, never killed: the reference result."""
    root = tmp_path_factory.mktemp("clean")
    (root / "markers").mkdir()
    proc = start_child(root / "data", conversation, root / "markers")
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    assert proc.returncode == 0, err
    calls = int(json.loads(out.splitlines()[-1])["extract_calls"])
    sessions = parse_locomo(json.loads(conversation.read_text()))
    state = read_db(root / "data")
    assert len(state.messages) == sum(len(s.messages) for s in sessions)
    assert len(state.atoms) >= 8 and calls >= 6, "the input must give L1 many windows to interrupt"
    return CleanRun(conversation, sessions, state, calls)


# --- the test -------------------------------------------------------------------------------------


@pytest.mark.parametrize("point", KILL_POINTS, ids=lambda p: p.name)
def test_a_killed_pipeline_resumes_to_the_clean_result(
    point: KillPoint, clean: CleanRun, tmp_path: Path
) -> None:
    home, markers = tmp_path / "data", tmp_path / "markers"
    markers.mkdir()
    pace = ["--hold-at", "1"] if point.hold_first else []
    if point.atoms_fraction is not None:
        pace = ["--throttle", str(PACE), "--hold-at", str(clean.extract_calls)]
    proc = start_child(home, clean.input, markers, *pace)
    try:
        wait_for_kill_point(proc, point, home, markers, len(clean.state.atoms))
    finally:
        killed = kill(proc)

    at_kill = read_db(snapshot(home, tmp_path / "at-kill"))
    assert_committed_prefix(at_kill, clean.state)
    if point.must_interrupt:
        assert killed, "the child finished before the kill point"
        assert unfinished(at_kill, clean.state), "the kill did not interrupt L1"

    recover(home, clean.sessions)

    assert_same_as_clean(read_db(home), clean.state)
    assert_mirrors_complete(home, read_db(home))


# --- child process --------------------------------------------------------------------------------


def start_child(home: Path, conversation: Path, markers: Path, *extra: str) -> subprocess.Popen[str]:
    """Start ``_crash_child.py`` on a data dir with this module's pipeline settings."""
    cmd = [
        sys.executable,
        str(CHILD),
        str(home),
        str(conversation),
        str(markers),
        json.dumps(PIPELINE),
        *extra,
    ]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_kill_point(
    proc: subprocess.Popen[str], point: KillPoint, home: Path, markers: Path, clean_atoms: int
) -> None:
    """Return when the kill point is reached, or when the child exited on its own (the caller
    then decides whether that is acceptable)."""
    deadline = time.monotonic() + TRIGGER_TIMEOUT
    wait_until(proc, deadline, lambda: (markers / "ready").exists())
    if point.hold_first:
        wait_until(proc, deadline, lambda: (markers / "hold").exists())
    elif point.delay is not None:
        time.sleep(point.delay)
    else:
        assert point.atoms_fraction is not None
        target = max(1, int(clean_atoms * point.atoms_fraction))
        with read_only(home) as db:
            wait_until(proc, deadline, lambda: atom_count(db) >= target, interval=0.002)


def wait_until(
    proc: subprocess.Popen[str], deadline: float, ready: Callable[[], bool], interval: float = 0.005
) -> None:
    """Poll ``ready`` until true or the child exits; fail the test at ``deadline``."""
    while not ready():
        if proc.poll() is not None:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"kill point not reached in {TRIGGER_TIMEOUT} s")
        time.sleep(interval)


def kill(proc: subprocess.Popen[str]) -> bool:
    """SIGKILL the child (if still running); True when it died of it."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode in (0, -signal.SIGKILL), f"child failed ({proc.returncode}): {err}"
    return proc.returncode == -signal.SIGKILL


@contextmanager
def read_only(home: Path) -> Iterator[sqlite3.Connection]:
    """A read-only sqlite3 connection to the live database (it never checkpoints or recovers)."""
    conn = sqlite3.connect(f"file:{home / 'memstrata.db'}?mode=ro", uri=True, timeout=5)
    try:
        yield conn
    finally:
        conn.close()


def atom_count(db: sqlite3.Connection) -> int:
    """Atoms committed so far, superseded ones included."""
    return int(db.execute("SELECT COUNT(*) FROM atoms").fetchone()[0])


# --- recovery -------------------------------------------------------------------------------------


def recover(home: Path, sessions: list[ImportSession]) -> None:
    """Reopen, let restart recovery run the backlog, re-capture and end every session; check the
    status along the way."""
    with Memory.open(home, embedder=None, pipeline=PIPELINE) as mem:
        before = mem.status()
        now = time.time() * 1000
        behind = [s for s in before.sessions if s.lag > 0]
        assert all(s.fire_at is not None and s.fire_at <= now for s in behind), before
        ran = mem.run_pending()
        assert ran >= len(behind)
        assert all(s.lag == 0 for s in mem.status().sessions), "run_pending left a backlog"

        for s in sessions:
            t = s.tenant
            result = mem.capture(
                list(s.messages), session_key=s.session_key, user_id=t.user_id, agent_id=t.agent_id
            )
            assert len(result.stored) + len(result.duplicates) + len(result.dropped) == len(s.messages)
            mem.end_session(s.session_key, user_id=t.user_id, agent_id=t.agent_id)

        status = mem.status()
        assert status.messages == sum(len(s.messages) for s in sessions)
        last = {m.session_key: m.seq for m in mem.messages(user_id=None, limit=1000)}
        assert {s.session_key: s.cursor for s in status.sessions} == last
        for st in status.sessions:
            assert (st.lag, st.pending, st.attempts, st.last_error, st.fire_at) == (0, 0, 0, None, None), st


# --- reading and comparing ------------------------------------------------------------------------


def snapshot(home: Path, dest: Path) -> Path:
    """Copy the database files as the kill left them, so inspecting them recovers nothing."""
    dest.mkdir()
    for f in home.glob("memstrata.db*"):
        shutil.copy2(f, dest / f.name)
    return dest


def read_db(home: Path) -> DbState:
    """Read the tables of ``home/memstrata.db`` (opening it read-write: recovers a hot WAL)."""
    conn = sqlite3.connect(home / "memstrata.db")
    try:
        messages = [
            (int(r[0]), str(r[1]), str(r[2]), str(r[3]))
            for r in conn.execute("SELECT seq, id, session_key, content FROM messages ORDER BY seq")
        ]
        atoms = [
            (str(r[0]), str(r[1]), str(r[2]), tuple(json.loads(r[3])), r[4])
            for r in conn.execute(
                "SELECT id, session_key, content, source_message_ids, superseded_by FROM atoms ORDER BY seq"
            )
        ]
        cursors = {
            str(r[0]): int(r[1]) for r in conn.execute("SELECT session_key, cursor FROM pipeline_sessions")
        }
        fts_in_step = all(
            _ids(conn, f"SELECT seq FROM {table}") == _ids(conn, f"SELECT rowid FROM {table}_fts")
            for table in ("messages", "atoms")
        )
        integrity = str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()
    return DbState(messages, atoms, cursors, fts_in_step, integrity)


def _ids(conn: sqlite3.Connection, sql: str) -> list[int]:
    return sorted(int(r[0]) for r in conn.execute(sql))


def clean_window_end(clean: DbState) -> dict[str, int]:
    """Per clean atom, the last message seq it cites: the end of the window that produced it (an
    update or merge also cites its targets' messages, which are older)."""
    seq = clean.seq_of()
    return {aid: max(seq[s] for s in sources) for aid, _, _, sources, _ in clean.atoms}


def unfinished(state: DbState, clean: DbState) -> bool:
    """Whether some session's cursor is short of its last message (L1 was interrupted)."""
    last = {key: seq for seq, _, key, _ in clean.messages}
    return any(state.cursors.get(key, 0) < seq for key, seq in last.items())


def assert_committed_prefix(state: DbState, clean: DbState) -> None:
    """Whatever the kill interrupted, the store holds whole windows only: its messages are a prefix
    of the clean run's, and its atoms are exactly the clean atoms of windows up to each cursor."""
    assert state.integrity == "ok"
    assert state.fts_in_step
    assert state.messages == clean.messages[: len(state.messages)]
    ends = clean_window_end(clean)
    sessions = {aid: key for aid, key, _, _, _ in clean.atoms}
    expected = {row for row in clean.atom_rows() if ends[row[0]] <= state.cursors.get(sessions[row[0]], 0)}
    assert state.atom_rows() == expected
    ids = {a[0] for a in state.atoms}
    assert all(by in ids for *_, by in state.atoms if by is not None), "superseded by a missing atom"


def assert_same_as_clean(state: DbState, clean: DbState) -> None:
    """Equal to the clean run in everything but seq numbers: a re-sent capture burns seqs
    (AUTOINCREMENT counts ignored duplicates), and atom ids derive from window-end seqs."""
    assert state.integrity == "ok"
    assert state.fts_in_step
    assert [m[1:] for m in state.messages] == [m[1:] for m in clean.messages]  # each turn once, in order
    assert len({m[1] for m in state.messages}) == len(state.messages)
    ids = [a[0] for a in state.atoms]
    assert len(ids) == len(set(ids))
    assert sorted(state.atom_facts()) == sorted(clean.atom_facts())  # contents, sources, supersessions
    current = Counter((content, sources) for _, _, content, sources, by in state.atoms if by is None)
    assert all(n == 1 for n in current.values()), "two current atoms say the same thing"
    clean_current = {(content, sources) for _, _, content, sources, by in clean.atoms if by is None}
    assert set(current) == clean_current
    last = {key: seq for seq, _, key, _ in state.messages}
    assert state.cursors == last


def assert_mirrors_complete(home: Path, state: DbState) -> None:
    """The JSONL mirrors hold every message and atom exactly once (topped up after the crash)."""
    for folder, ids in (
        ("conversations", [m[1] for m in state.messages]),
        ("records", [a[0] for a in state.atoms]),
    ):
        lines = [json.loads(x) for f in sorted((home / folder).glob("*.jsonl")) for x in _lines(f)]
        assert sorted(line["id"] for line in lines) == sorted(ids), folder


def _lines(path: Path) -> Iterator[str]:
    yield from (x for x in path.read_text().splitlines() if x.strip())


# --- synthetic input ------------------------------------------------------------------------------

_TOPICS = [
    "I adopted a puppy named {x} last week and we walk every morning.",
    "My sister {x} is moving to Lisbon next month for a new job.",
    "I finished reading a novel by {x} about sailing around Cape Horn.",
    "We planted tomatoes and basil in the garden with {x} on Saturday.",
    "I started pottery classes at the community center with {x}.",
    "My friend {x} ran the Berlin marathon in under four hours.",
]
_NAMES = ["Biscuit", "Marta", "Jonas", "Priya", "Tomas", "Leila", "Ravi", "Sofia"]


def synthetic_sample() -> dict[str, Any]:
    """A LoCoMo-format sample: two sessions of 16 turns between two speakers."""
    conv: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben"}
    for n, when in ((1, "1:56 pm on 8 May, 2023"), (2, "10:04 am on 20 May, 2023")):
        turns = []
        for i in range(16):
            text = _TOPICS[(i + n) % len(_TOPICS)].format(x=_NAMES[(i * 3 + n) % len(_NAMES)])
            turns.append({"speaker": "Ana" if i % 2 == 0 else "Ben", "dia_id": f"D{n}:{i + 1}", "text": text})
        conv[f"session_{n}"] = turns
        conv[f"session_{n}_date_time"] = when
    return {"sample_id": "synthetic-1", "conversation": conv}
