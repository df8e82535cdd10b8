"""A server's pipeline calls are done by its workers (issue 51): ``end_session``, ``run_all``,
``run_pending`` and an import with ``process`` sent to ``memstrata serve`` mark the work due in the
store and wait for the durable cursors, bounded by ``server.pipeline_wait_seconds``.

With no worker at all (``--workers 0``) the server extracts nothing itself: the call answers 503
``not_done`` (the client raises ``NotDoneError``), every message stays stored, and a worker started
later does the work; the same call asked again then answers once it is done. With its own worker
an import with ``process`` answers with every session extracted, consolidated and a persona
written."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from memstrata import Memory, NotDoneError
from memstrata.client import MemoryClient
from tests.support.serve_process import serve as start_serve
from tests.support.store_counts import counts

pytest.importorskip("fastapi")

ENV = {
    "MEMSTRATA_EMBEDDING__PROVIDER": "hashing",
    "MEMSTRATA_PIPELINE__EVERY_N_CONVERSATIONS": "1000000",  # due by the idle timer or a demand only
    "MEMSTRATA_PIPELINE__WARM_UP": "false",
    "MEMSTRATA_PIPELINE__L1_IDLE_TIMEOUT_SECONDS": "600",
    "MEMSTRATA_PIPELINE__RETRY_DELAY_SECONDS": "0.5",
    "MEMSTRATA_PIPELINE__L2_DELAY_AFTER_L1_SECONDS": "600",  # L2 and L3 only when asked for
    "MEMSTRATA_PIPELINE__L2_MIN_INTERVAL_SECONDS": "600",
    "HF_HUB_OFFLINE": "1",
}
TOPICS = ["I moved to {x} last year.", "My dog {x} loves the river.", "I work as a nurse in {x}."]


def seed(users: list[str], sessions: int, turns: int) -> dict[str, object]:
    out = []
    for user in users:
        for s in range(sessions):
            conversation = [
                {"role": "user", "content": TOPICS[i % 3].format(x=f"{user.title()}ville{s}{i}")}
                for i in range(turns)
            ]
            out.append({"sessionKey": f"s{s}", "userId": user, "conversations": [conversation]})
    return {"sessions": out}


def stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_a_server_without_workers_extracts_nothing_and_says_the_work_waits(tmp_path: Path) -> None:
    home = tmp_path / "data"
    env = {**ENV, "MEMSTRATA_SERVER__PIPELINE_WAIT_SECONDS": "0.5"}
    proc, base = start_serve(["--data-dir", str(home)], {**env, "MEMSTRATA_SERVER__WORKERS": "0"})
    worker: subprocess.Popen[str] | None = None
    try:
        with httpx.Client(base_url=base, timeout=60) as http:
            body = {"data": seed(["ana", "ben"], 2, 6), "process": True}
            answer = http.post("/v1/import", json=body)
            assert answer.status_code == 503, answer.text
            error = answer.json()["error"]
            assert error["code"] == "not_done" and "Nothing is lost" in error["message"]
            assert counts(home) == (24, 0, 24)  # every message stored, none extracted by the server
            ended = http.post("/v1/sessions/end", json={"session_key": "s0", "user_id": "ana"})
            assert ended.status_code == 503 and ended.json()["error"]["code"] == "not_done"
            with (
                MemoryClient(base, retries=0) as client,
                pytest.raises(NotDoneError, match="Nothing is lost"),
            ):
                client.run_all()
            assert counts(home) == (24, 0, 24)
            worker = subprocess.Popen(
                [sys.executable, "-m", "memstrata", "worker", "--data-dir", str(home)],
                env={**os.environ, **env},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            deadline = time.monotonic() + 120
            while (again := http.post("/v1/import", json=body)).status_code != 200:
                assert again.status_code == 503 and time.monotonic() < deadline, again.text
            report = again.json()
            assert report["duplicates"] == 24 and report["failed"] == 0, report
            assert counts(home)[1:] != (0, 0) and counts(home)[2] == 0  # the worker extracted it all
            status = http.get("/v1/status").json()
            assert not [t for t in status["tenants"] if t["l2_error"] or t["l3_error"]]
            assert status["unembedded"] == 0
    finally:
        stop(proc)
        if worker is not None:
            worker.wait(timeout=30)  # its owner is gone: it stops by itself


def test_an_import_with_process_through_a_server_is_done_by_its_worker(tmp_path: Path) -> None:
    home = tmp_path / "data"
    proc, base = start_serve(
        ["--data-dir", str(home)], {**ENV, "MEMSTRATA_SERVER__PIPELINE_WAIT_SECONDS": "120"}
    )
    try:
        with httpx.Client(base_url=base, timeout=150) as http:
            answer = http.post("/v1/import", json={"data": seed(["ana", "ben"], 3, 8), "process": True})
            assert answer.status_code == 200, answer.text
            report = answer.json()
            assert report["stored"] == 48 and report["extracted"] == 6 and report["failed"] == 0, report
            assert report["atoms"] > 0
            assert counts(home)[2] == 0  # every session's cursor at its last message
            status = http.get("/v1/status").json()
            for tenant in status["tenants"]:
                assert tenant["last_l2"] is not None and tenant["last_l3"] is not None, tenant
            # Nothing left to do: the calls answer at once, with nothing run.
            assert (
                http.post("/v1/sessions/end", json={"session_key": "s0", "user_id": "ana"}).status_code == 200
            )
            ran = http.post("/v1/pipeline/run-all").json()
            assert (ran["l1"], ran["l1_failed"], ran["upper_failed"]) == (0, 0, 0), ran
    finally:
        stop(proc)
    with Memory.open(home, read_only=True) as mem:
        assert not [s for s in mem.status().sessions if s.lag]
        assert mem.persona(user_id="ana") and mem.persona(user_id="ben")
