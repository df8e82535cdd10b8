"""The query process: a real child running the shipped model gives the in-process vectors, and
whatever happens to it (killed, hung, unable to start, closed) no query fails or waits long."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memstrata.embeddings import query_process
from memstrata.embeddings.local import DATA_DIR, LocalEmbedder
from memstrata.embeddings.query_process import MAX_STARTS, QueryProcess
from tests.unit.embeddings.children import child_pid, running_child, wait_for
from tests.unit.embeddings.local_texts import AWKWARD

TEXTS = ["Where did Maya move to last spring?", "When is Caroline's birthday?", *AWKWARD]


@pytest.fixture
def running() -> Iterator[QueryProcess]:
    with running_child(timeout_s=2.0) as process:
        yield process


@pytest.fixture(scope="module")
def in_process() -> LocalEmbedder:
    return LocalEmbedder()


def test_the_child_gives_the_vectors_of_a_pass_in_process(
    running: QueryProcess, in_process: LocalEmbedder
) -> None:
    got = running.embed(TEXTS)
    assert got is not None and got.shape == (len(TEXTS), 384) and got.dtype == np.float32
    np.testing.assert_allclose(got, in_process.embed_queries(TEXTS), atol=1e-5)
    assert (running.passes, running.failures) == (1, 0)


def test_a_killed_child_is_counted_and_replaced(running: QueryProcess, in_process: LocalEmbedder) -> None:
    os.kill(child_pid(running), signal.SIGKILL)
    assert running.embed(TEXTS[:2]) is None  # the caller embeds this one itself
    assert running.failures == 1 and running.state == "restarting"
    wait_for(running, "running")
    again = running.embed(TEXTS[:2])
    assert again is not None
    np.testing.assert_allclose(again, in_process.embed_queries(TEXTS[:2]), atol=1e-5)


def test_a_hung_child_is_given_up_on_after_its_timeout(running: QueryProcess) -> None:
    hung = child_pid(running)
    os.kill(hung, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        assert running.embed(["a query"]) is None
        assert 1.9 < time.monotonic() - t0 < 10  # timeout_s=2, then the child is killed
        assert running.failures == 1
        wait_for(running, "running")
        assert child_pid(running) != hung and running.embed(["a query"]) is not None
    finally:
        with contextlib.suppress(ProcessLookupError):  # gone already, as it should be
            os.kill(hung, signal.SIGCONT)


def test_a_child_that_cannot_start_is_retried_then_given_up(tmp_path: Path) -> None:
    process = QueryProcess(tmp_path, 384)  # no model there: each child dies loading it
    process.start()
    wait_for(process, "given up")
    assert process.failures == MAX_STARTS
    assert process.embed(["a query"]) is None


def test_a_missing_interpreter_is_a_failure_too(tmp_path: Path) -> None:
    process = QueryProcess(DATA_DIR, 384, python=str(tmp_path / "no-python"))
    process.start()
    wait_for(process, "given up", timeout=10)
    assert process.failures == MAX_STARTS


def test_close_ends_the_child(running: QueryProcess) -> None:
    pid = child_pid(running)
    running.close()
    assert running.state == "closed" and running.embed(["a query"]) is None
    assert not Path(f"/proc/{pid}").exists() or "zombie" not in Path(f"/proc/{pid}/status").read_text()


def test_the_child_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    script = (
        "import sys, time\n"
        "from memstrata.embeddings.local import DATA_DIR\n"
        "from memstrata.embeddings.query_process import QueryProcess\n"
        "p = QueryProcess(DATA_DIR, 384); p.start()\n"
        "while p.state != 'running': time.sleep(0.02)\n"
        "print(p._child.pid, flush=True); time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text():
        assert time.monotonic() < deadline, "the query process outlived its server"
        time.sleep(0.05)


def test_a_local_embedder_with_a_query_process_uses_it_and_reports_it(
    in_process: LocalEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(query_process, "_children", {})
    served = LocalEmbedder(query_process=True)
    process = query_process.shared(DATA_DIR, 384)
    assert LocalEmbedder(query_process=True)._process is process  # one child per model, shared
    try:
        early = served.embed_queries(TEXTS)  # starting or running: either way the right vectors
        wait_for(process, "running")
        got = served.embed_queries(TEXTS)
        report = served.query_report()
    finally:
        process.close()
    np.testing.assert_allclose(early, in_process.embed_queries(TEXTS), atol=1e-5)
    np.testing.assert_allclose(got, in_process.embed_queries(TEXTS), atol=1e-5)
    assert (report.process, report.process_failures) == ("running", 0) and report.process_passes >= 1
    assert in_process.query_report().process == "off"


def test_a_long_text_to_a_hung_child_fails_in_time_instead_of_blocking(running: QueryProcess) -> None:
    hung = child_pid(running)
    os.kill(hung, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        assert running.embed(["word " * 200_000]) is None  # 1 MB: far more than a pipe holds
        assert time.monotonic() - t0 < 10 and running.failures == 1
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(hung, signal.SIGCONT)


def test_a_long_text_gets_its_vector_from_the_child(running: QueryProcess, in_process: LocalEmbedder) -> None:
    text = "word " * 200_000  # the model reads its first 256 pieces, as in the server
    got = running.embed([text])
    assert got is not None
    np.testing.assert_allclose(got, in_process.embed_queries([text]), atol=1e-5)


def test_wait_ready_returns_once_the_child_answers() -> None:
    process = QueryProcess(DATA_DIR, 384)
    process.start()
    try:
        assert process.wait_ready(60) == "running"
        assert process.embed(["a query"]) is not None  # no poll needed: ready means ready
    finally:
        process.close()


def test_wait_ready_returns_when_the_child_is_given_up_on(tmp_path: Path) -> None:
    process = QueryProcess(tmp_path, 384)  # no model there: every child dies loading it
    process.start()
    assert process.wait_ready(60) == "given up"
    assert process.failures == MAX_STARTS


def test_wait_ready_keeps_to_its_bound_while_the_child_is_still_starting(tmp_path: Path) -> None:
    slow = tmp_path / "slow-python"
    slow.write_text("#!/bin/sh\nexec sleep 30\n")  # a child that never says it is ready
    slow.chmod(0o755)
    process = QueryProcess(DATA_DIR, 384, python=str(slow))
    process.start()
    try:
        t0 = time.monotonic()
        assert process.wait_ready(0.3) == "starting"
        assert 0.25 < time.monotonic() - t0 < 5
    finally:
        process.close()


def test_a_warmed_local_embedder_has_its_weights_and_its_child_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(query_process, "_children", {})
    served = LocalEmbedder(query_process=True)
    process = query_process.shared(DATA_DIR, 384)
    try:
        served.warm_up(60)
        assert process.state == "running"
        assert served._loaded is not None  # the server's own copy, for batches and fallbacks
    finally:
        process.close()
