"""SIGKILL of a worker, or of the server that owns the data directory, while the worker extracts a
backlog (``memstrata serve`` on SQLite with its worker): nothing lost, nothing doubled. The same
while the server waits for its worker to do an import sent with ``process`` (the handoff: the
server marks the sessions due and waits for their cursors): a killed worker's replacement finishes
and the call answers; a killed server's call fails, and the restarted server's worker finishes.

A killed worker is started again by its server and the new one finishes the backlog (the
window the dead one was on was never committed: its cursor did not move). A killed server
leaves its worker orphaned; the worker notices and stops, and the restarted server's worker
finishes. Either way every message is extracted, no atom is there twice, and both JSONL
mirrors agree line for line with the tables although two processes wrote them.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from memstrata.models import AtomFilter, MessageFilter
from memstrata.stores.sqlite.store import SqliteStore
from tests.support.serve_process import serve as start_serve
from tests.support.serve_process import wait_up
from tests.support.sockets import free_port
from tests.support.store_counts import counts

pytest.importorskip("fastapi")

SESSIONS, PER_SESSION = 40, 60  # 2,400 messages: several seconds of extraction on this machine
ENV = {
    "MEMSTRATA_EMBEDDING__PROVIDER": "hashing",  # the worker embeds the backlog too
    "MEMSTRATA_PIPELINE__EVERY_N_CONVERSATIONS": "1000000",  # due by the idle timer only
    "MEMSTRATA_PIPELINE__WARM_UP": "false",
    "MEMSTRATA_PIPELINE__L1_IDLE_TIMEOUT_SECONDS": "1",
    "MEMSTRATA_PIPELINE__RETRY_DELAY_SECONDS": "0.5",
    "MEMSTRATA_PIPELINE__L2_DELAY_AFTER_L1_SECONDS": "0.5",
    "MEMSTRATA_PIPELINE__L2_MIN_INTERVAL_SECONDS": "1",
    "HF_HUB_OFFLINE": "1",
}


def serve(home: Path) -> tuple[subprocess.Popen[str], str]:
    return start_serve(["--data-dir", str(home)], ENV)


def workers_of(pid: int) -> list[int]:
    """The pids of ``pid``'s ``memstrata worker`` children."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                if "\0worker\0" in Path(f"/proc/{child}/cmdline").read_text():
                    found.append(int(child))
            except FileNotFoundError:
                pass
    return found


def capture_backlog(base: str) -> None:
    with httpx.Client(base_url=base, timeout=60) as http:
        for s in range(SESSIONS):
            turns = [
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": f"In week {i} of trip {s} I hiked {i % 9 + 1} km near lake {s * 100 + i}.",
                    "id": f"t{s}-{i}",
                }
                for i in range(PER_SESSION)
            ]
            reply = http.post("/v1/capture", json={"messages": turns, "session_key": f"trip{s}"})
            assert reply.status_code == 200, reply.text


def wait_mid_run(home: Path, timeout: float = 120.0) -> None:
    """Until the worker has committed atoms and still has messages to extract."""
    deadline = time.monotonic() + timeout
    while True:
        _, atoms, behind = counts(home)
        if atoms and behind:
            return
        assert time.monotonic() < deadline and not (atoms and not behind), (atoms, behind)
        time.sleep(0.05)


def wait_all_extracted(home: Path, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while counts(home)[2]:
        assert time.monotonic() < deadline, f"still behind: {counts(home)[1:]}"
        time.sleep(0.2)


def stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    return err


def assert_whole(home: Path, remembered: int = 0) -> None:
    """Every message stored once and extracted, no atom twice, mirrors equal to the tables."""
    store = SqliteStore(home, read_only=True)
    try:
        messages = store.messages.list(None, MessageFilter(), limit=100_000)
        assert len(messages) == SESSIONS * PER_SESSION + remembered
        atoms = store.atoms.list(None, AtomFilter(include_superseded=True), limit=100_000)
        twice = [k for k, n in Counter((a.content, a.source_message_ids) for a in atoms).items() if n > 1]
        assert atoms and not twice, twice[:3]
        assert store.mirror_check(full=True) is None
    finally:
        store.close()


def test_a_worker_killed_mid_run_is_replaced_and_nothing_is_lost_or_doubled(tmp_path: Path) -> None:
    home = tmp_path / "data"
    proc, base = serve(home)
    try:
        (first,) = workers_of(proc.pid)
        capture_backlog(base)
        wait_mid_run(home)
        for n in range(5):  # the server writes atoms (and the records mirror) while the worker does
            note = {"text": f"My locker number at the gym is {n}{n}7."}
            assert httpx.post(base + "/v1/remember", json=note, timeout=60).status_code == 200
        os.kill(first, signal.SIGKILL)  # mid-run: atoms committed, messages still behind
        assert counts(home)[2] > 0
        wait_all_extracted(home)
        (second,) = workers_of(proc.pid)
        assert second != first  # the server started another
        status = httpx.get(base + "/v1/status", timeout=60).json()
        assert not [s for s in status["sessions"] if s["last_error"]] and not status["problems"]
    finally:
        stop(proc)
    assert_whole(home, remembered=5)


def test_a_killed_server_stops_its_worker_and_a_restart_finishes(tmp_path: Path) -> None:
    home = tmp_path / "data"
    proc, base = serve(home)
    (worker,) = workers_of(proc.pid)
    capture_backlog(base)
    wait_mid_run(home)
    proc.send_signal(signal.SIGKILL)  # the owner dies; its worker is mid-run
    proc.wait(timeout=30)
    deadline = time.monotonic() + 15
    while Path(f"/proc/{worker}").exists() and "zombie" not in _state(worker):
        assert time.monotonic() < deadline, "the orphaned worker kept running"
        time.sleep(0.1)
    assert counts(home)[2] > 0  # what it left is still to do
    proc, base = serve(home)
    try:
        wait_all_extracted(home)
    finally:
        stop(proc)
    assert_whole(home)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except FileNotFoundError:
        return "zombie"


def test_a_worker_started_by_hand_joins_a_server_that_runs_none(tmp_path: Path) -> None:
    """``serve --workers 0`` on a data directory extracts nothing; ``memstrata worker`` on the same
    directory joins it (no lock of its own), does the work, and stops when the server stops."""
    home = tmp_path / "data"
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memstrata",
            "--data-dir",
            str(home),
            "serve",
            "--port",
            str(port),
            "--workers",
            "0",
        ],
        env={**os.environ, **ENV},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    wait_up(proc, base)
    worker: subprocess.Popen[str] | None = None
    try:
        assert not workers_of(proc.pid)
        capture_backlog(base)
        time.sleep(2)
        assert counts(home)[1:] == (0, SESSIONS * PER_SESSION)  # the server extracts nothing itself
        worker = subprocess.Popen(
            [sys.executable, "-m", "memstrata", "worker", "--data-dir", str(home)],
            env={**os.environ, **ENV},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_all_extracted(home)
    finally:
        stop(proc)
    assert worker is not None
    worker.wait(timeout=30)  # its owner is gone: it stops by itself
    assert_whole(home)


HANDOFF_ENV = {
    **ENV,
    "MEMSTRATA_PIPELINE__L1_IDLE_TIMEOUT_SECONDS": "600",  # nothing extracted before the import asks
    "MEMSTRATA_SERVER__PIPELINE_WAIT_SECONDS": "240",
}


class Importing(threading.Thread):
    """``POST /v1/import`` with ``process`` of the same backlog as ``capture_backlog``; ``answer``
    holds the response, or the transport error of a server that died."""

    def __init__(self, base: str) -> None:
        super().__init__(daemon=True)
        self.base = base
        self.answer: httpx.Response | httpx.TransportError | None = None

    def run(self) -> None:
        sessions = [
            {
                "sessionKey": f"trip{s}",
                "conversations": [
                    [
                        {
                            "role": "user" if i % 2 == 0 else "assistant",
                            "content": f"In week {i} of trip {s} I hiked {i % 9 + 1} km near lake {s * 100 + i}.",
                            "id": f"t{s}-{i}",
                        }
                        for i in range(PER_SESSION)
                    ]
                ],
            }
            for s in range(SESSIONS)
        ]
        try:
            self.answer = httpx.post(
                self.base + "/v1/import", json={"data": {"sessions": sessions}, "process": True}, timeout=300
            )
        except httpx.TransportError as exc:
            self.answer = exc


def stored(home: Path) -> int:
    conn = sqlite3.connect(f"file:{home / 'memstrata.db'}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0])
    finally:
        conn.close()


def wait_mid_handoff(home: Path, call: Importing) -> None:
    """Until every message is stored and the worker, asked by the import, has committed atoms and
    still has messages to extract."""
    deadline = time.monotonic() + 120
    while stored(home) < SESSIONS * PER_SESSION:
        assert time.monotonic() < deadline and call.is_alive(), call.answer
        time.sleep(0.05)
    wait_mid_run(home)


def test_a_worker_killed_while_the_server_waits_for_it_is_replaced_and_the_call_answers(
    tmp_path: Path,
) -> None:
    home = tmp_path / "data"
    proc, base = start_serve(["--data-dir", str(home)], HANDOFF_ENV)
    try:
        (first,) = workers_of(proc.pid)
        call = Importing(base)
        call.start()
        wait_mid_handoff(home, call)
        os.kill(first, signal.SIGKILL)
        call.join(timeout=280)
        answer = call.answer
        assert isinstance(answer, httpx.Response) and answer.status_code == 200, answer
        report = answer.json()
        assert report["stored"] == SESSIONS * PER_SESSION and report["failed"] == 0, report
        assert counts(home)[2] == 0  # answered once every session's cursor reached its last message
        (second,) = workers_of(proc.pid)
        assert second != first
    finally:
        stop(proc)
    assert_whole(home)


def test_a_server_killed_while_it_waits_for_its_worker_loses_nothing(tmp_path: Path) -> None:
    home = tmp_path / "data"
    proc, base = start_serve(["--data-dir", str(home)], HANDOFF_ENV)
    (worker,) = workers_of(proc.pid)
    call = Importing(base)
    call.start()
    wait_mid_handoff(home, call)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    call.join(timeout=60)
    assert isinstance(call.answer, httpx.TransportError), call.answer  # the caller is told it failed
    deadline = time.monotonic() + 15
    while Path(f"/proc/{worker}").exists() and "zombie" not in _state(worker):
        assert time.monotonic() < deadline, "the orphaned worker kept running"
        time.sleep(0.1)
    assert counts(home)[2] > 0
    proc, base = start_serve(["--data-dir", str(home)], HANDOFF_ENV)
    try:
        wait_all_extracted(home)  # the restarted worker resumes the backlog at once
    finally:
        stop(proc)
    assert_whole(home)
