"""SIGKILL anywhere in ``memstrata import`` (capture, vectors, L1, L2, L3), then import again: the
result equals a clean run's.

A child process (``_import_child.py``) runs the real CLI command on a LoCoMo conversation cut to
two sessions, with the hashing embedder and small L1 windows and L2 batches (many commits to
interrupt). Its timeline is a sequence of ticks: each store transaction before and after its
commit, each file rename before and after. A clean run counts them; each kill point is a tick
drawn by a seeded RNG (one per equal stretch of the timeline, so capture, L1, L2 and L3 all get
points), and the child SIGKILLs itself there. Then the same ``memstrata import`` runs again, to
completion, and the data directory must equal the clean run's: the same messages and atoms
(ids, contents, every column), exactly one vector per message and atom (equal to the clean
vectors), keyword indexes in step, the same pipeline state, and the same scene, index and persona
files byte for byte (both runs use one frozen clock).

Default: ``DEFAULT_POINTS`` points. ``pytest --soak`` runs ``SOAK_POINTS`` (or ``--soak-points N``);
``--soak-seed S`` draws other points. A failure names its tick and what the child was doing there:
rerun with the same seed to reproduce it.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import LOCOMO, cut_locomo

CHILD = Path(__file__).with_name("_import_child.py")
DEFAULT_POINTS = 5
SOAK_POINTS = 20
DEFAULT_SEED = 20261130
ENV = {
    "MEMSTRATA_EMBEDDING__PROVIDER": "hashing",
    "MEMSTRATA_PIPELINE__WINDOW_SIZE": "4",  # about ten L1 commits per session
    "MEMSTRATA_PIPELINE__L2_BATCH_SIZE": "16",  # several consolidation calls in one L2 run
}
TIMEOUT = 120


@dataclass(frozen=True, slots=True)
class Clean:
    input: Path
    home: Path
    timeline: list[str]


def kill_points(ticks: int, n: int, seed: int) -> list[int]:
    """``n`` ticks in 1..``ticks``, one drawn in each of ``n`` equal stretches of the timeline."""
    rng = random.Random(seed)
    return [rng.randint(1 + k * ticks // n, max(1 + k * ticks // n, (k + 1) * ticks // n)) for k in range(n)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "point" in metafunc.fixturenames:
        config = metafunc.config
        n = config.getoption("soak_points") or (SOAK_POINTS if config.getoption("soak") else DEFAULT_POINTS)
        metafunc.parametrize("point", range(n), ids=[f"point-{k + 1}-of-{n}" for k in range(n)])


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Clean:
    """The import run to completion, never killed: the reference result and its timeline."""
    if not LOCOMO.exists():
        pytest.skip("LoCoMo dev set not present")
    root = tmp_path_factory.mktemp("clean")
    source = cut_locomo(root / "conversation.json", sessions=2)
    proc = run_child(root / "data", source, root / "timeline.txt")
    assert proc.returncode == 0, proc.stderr
    timeline = (root / "timeline.txt").read_text().splitlines()
    assert len(timeline) >= 60, "the run must give many ticks to interrupt"
    return Clean(source, root / "data", timeline)


def test_a_killed_import_resumes_to_the_clean_result(
    point: int, clean: Clean, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    config = request.config
    n = config.getoption("soak_points") or (SOAK_POINTS if config.getoption("soak") else DEFAULT_POINTS)
    seed = config.getoption("soak_seed") or DEFAULT_SEED
    tick = kill_points(len(clean.timeline), n, seed)[point]
    where = f"killed at tick {tick} of {len(clean.timeline)} (seed {seed}): {clean.timeline[tick - 1]}"
    home = tmp_path / "data"

    killed = run_child(home, clean.input, tmp_path / "timeline.txt", "--kill-at", str(tick))
    assert killed.returncode == -signal.SIGKILL, f"{where}: the child was not killed: {killed.stderr}"

    resumed = run_child(home, clean.input, tmp_path / "timeline.txt")
    assert resumed.returncode == 0, f"{where}: the resumed import failed: {resumed.stderr}"
    assert_same_data(home, clean.home, where)


# --- the child ------------------------------------------------------------------------------------


def run_child(home: Path, source: Path, timeline: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **ENV}
    env.pop("MEMSTRATA_HOME", None)
    cmd = [sys.executable, str(CHILD), str(home), str(source), str(timeline), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=TIMEOUT, check=False)


# --- comparing ------------------------------------------------------------------------------------

_TABLES = {
    "messages": "SELECT * FROM messages ORDER BY seq",
    "atoms": "SELECT * FROM atoms ORDER BY seq",
    "vectors": "SELECT layer, seq, user_id, agent_id, vec FROM vectors ORDER BY layer, seq",
    # Not ``runs``: it counts run attempts, and the killed run was one.
    "sessions": "SELECT user_id, agent_id, session_key, cursor, pending, fire_at, attempts, last_error, "
    "last_activity FROM pipeline_sessions ORDER BY user_id, agent_id, session_key",
    # The snapshot columns name backup folders by wall-clock time; both are empty after a run.
    "tenants": "SELECT * FROM pipeline_tenants ORDER BY user_id, agent_id",
    "messages_fts": "SELECT rowid, body FROM messages_fts ORDER BY rowid",
    "atoms_fts": "SELECT rowid, body FROM atoms_fts ORDER BY rowid",
}


def read_tables(home: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(f"file:{home / 'memstrata.db'}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return {name: [tuple(r) for r in conn.execute(sql)] for name, sql in _TABLES.items()}
    finally:
        conn.close()


def profile_files(home: Path) -> dict[str, bytes]:
    """Every file under ``profiles/`` but the backups (named by wall-clock time), by path."""
    root = home / "profiles"
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".backup" not in p.relative_to(root).parts
    }


def assert_same_data(home: Path, clean_home: Path, where: str) -> None:
    got, want = read_tables(home), read_tables(clean_home)
    for name in _TABLES:
        assert got[name] == want[name], f"{where}: table {name} differs from the clean run's"
    records = {("L0", m[0]) for m in got["messages"]} | {("L1", a[0]) for a in got["atoms"]}
    vectors = [(v[0], v[1]) for v in got["vectors"]]
    assert len(vectors) == len(set(vectors)) and set(vectors) == records, (
        f"{where}: not one vector per record"
    )
    files, clean_files = profile_files(home), profile_files(clean_home)
    assert sorted(files) == sorted(clean_files), f"{where}: scene/persona files differ"
    for name, data in clean_files.items():
        assert files[name] == data, f"{where}: {name} differs from the clean run's"
