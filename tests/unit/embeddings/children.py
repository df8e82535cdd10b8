"""The shipped model's child processes in tests: start one and wait for a state, find its pid."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from memstrata.embeddings.local import DATA_DIR
from memstrata.embeddings.query_process import QueryProcess
from memstrata.models import QueryProcessState


def wait_for(process: QueryProcess, *states: QueryProcessState, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while process.state not in states:
        assert time.monotonic() < deadline, f"still {process.state}, not {states}"
        time.sleep(0.02)


def child_pid(process: QueryProcess) -> int:
    child = process._child  # the test needs the real child to kill it
    assert child is not None
    return child.pid


@contextmanager
def running_child(*, timeout_s: float | None = None) -> Iterator[QueryProcess]:
    """A query process of the shipped model, running, closed after the block."""
    process = QueryProcess(DATA_DIR, 384, timeout_s=timeout_s)
    process.start()
    try:
        wait_for(process, "running")
        yield process
    finally:
        process.close()
