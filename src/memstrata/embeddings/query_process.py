"""A server's query passes in a process of their own, away from its GIL.

A query's forward pass is about a hundred numpy calls, and each gives the GIL up and takes it
back. In a server whose other threads run Python (requests, the pipeline, SQLite), each take-back
may wait for whichever thread holds it, so under load a 4.5 ms pass took 10 ms at the median and
over 20 at p95 (bench/gateway_load.py with the local model: docs/benchmarks.md, "Query passes in
a process of their own"). Here the pass runs in a child process that holds the model and does
nothing else: the server's thread writes the texts to a pipe and blocks on the answer, one hand-off
instead of a hundred.

The child is ``python -m memstrata.embeddings.query_child MODEL_DIR``, not multiprocessing
(whose spawning re-imports the caller's ``__main__``). Frames both ways are a 4-byte big-endian
length and a body: to the child, the texts as a JSON list; back, ``b"R"`` once when its model is
loaded, then per request ``b"V"`` and the float32 rows, or ``b"E"`` and an error message. The child
exits when its stdin closes, so it ends with the server however that ends.

The child starts in the background; until it is ready, and whenever it fails, ``embed`` returns
None and the caller runs the pass in its own process as before: a query never waits for the
child to start and never fails because of it. A failure (the child died, hung past
``timeout_s``, 5 s, or answered garbage) is logged and counted; the child is started again, up to
``MAX_STARTS`` times in a row without one answer, after which the server keeps its queries.

A second child of this code once took the server's background batches at the lowest priority;
since the pipeline runs in the server's worker processes (issue 51) the server has no background
batches, and under bench/gateway_load.py it embedded none: it went.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memstrata.models import QueryProcessState, Vectors

log = logging.getLogger(__name__)

MAX_STARTS = 3
# A pass is milliseconds (a full batch of 32 queries on a loaded machine, well under a second).
# Queries queue behind a pass, so a hung child holds every search up for this long, once.
TIMEOUT_S = 5.0
_READY_TIMEOUT_S = 120.0  # importing numpy and loading the weights on a loaded machine
_LENGTH = struct.Struct(">I")
_MAX_FRAME = 64 << 20
FOREVER = float("inf")


class ChildFailed(Exception):
    """The child died, hung or broke the protocol (never leaves this module)."""


class QueryProcess:
    """Query passes of the shipped model in ``model_dir``, in a child process."""

    def __init__(
        self,
        model_dir: Path,
        dimensions: int,
        *,
        timeout_s: float | None = None,
        python: str | None = None,
    ) -> None:
        self._role = "query process"
        self._model_dir = model_dir
        self._dimensions = dimensions
        self._timeout_s = timeout_s if timeout_s is not None else TIMEOUT_S
        self._python = python or sys.executable
        self._lock = threading.Lock()  # one request on the pipe at a time
        self._settled = threading.Condition(self._lock)  # notified when the state changes
        self._child: subprocess.Popen[bytes] | None = None
        self._state: QueryProcessState = "starting"
        self._starts_in_a_row = 0
        self.passes = 0
        self.failures = 0

    @property
    def state(self) -> QueryProcessState:
        return self._state

    def start(self) -> None:
        """Start the child in the background (the caller does not wait for it)."""
        threading.Thread(target=self._start, name="memstrata-query-process", daemon=True).start()

    def wait_ready(self, within: float) -> QueryProcessState:
        """Wait up to ``within`` seconds while the child starts (or restarts); the state then.
        A server calls this before it takes requests, so its first queries are not the ones
        that run here while the child loads its weights."""
        with self._settled:
            self._settled.wait_for(lambda: self._state not in ("starting", "restarting"), timeout=within)
            return self._state

    def embed(self, texts: Sequence[str]) -> Vectors | None:
        """One unit row per text from the child, or None when it is not there to ask (starting,
        failed just now, or given up): the caller embeds them itself."""
        if self._state != "running" or not texts:
            return None
        body = json.dumps(list(texts), ensure_ascii=False).encode()
        if len(body) >= _MAX_FRAME:
            return None  # more than a frame holds: the caller's own pass, the child kept
        with self._lock:
            child = self._child
            if self._state != "running" or child is None:
                return None
            try:
                deadline = time.monotonic() + self._timeout_s
                _send(child, body, deadline)
                kind, payload = _receive(child, deadline)
                if kind == b"E":
                    # The model failed on these texts: not the child's fault, and the caller's own
                    # pass will raise the same error in its own words.
                    log.warning("%s: %s", self._role, payload.decode(errors="replace"))
                    return None
                if kind != b"V" or len(payload) != 4 * len(texts) * self._dimensions:
                    raise ChildFailed(f"an answer of kind {kind!r} and {len(payload)} bytes")
            except ChildFailed as exc:
                self._fail(f"{exc}")
                return None
            self.passes += 1
            self._starts_in_a_row = 0
        return np.frombuffer(payload, dtype=np.float32).reshape(len(texts), self._dimensions).copy()

    def close(self) -> None:
        """Stop the child and wait for it; queries run in the caller's process from now on."""
        with self._lock:
            self._state = "closed"
            self._settled.notify_all()
            self._stop_child()

    def _start(self) -> None:
        with self._lock:
            if self._state not in ("starting", "restarting"):
                return
            self._starts_in_a_row += 1
            try:
                child = subprocess.Popen(
                    [self._python, "-m", "memstrata.embeddings.query_child", str(self._model_dir)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    env=one_blas_thread(),
                )
            except OSError as exc:
                self._fail(f"could not start: {exc}")
                return
            assert child.stdin is not None
            os.set_blocking(child.stdin.fileno(), False)  # ``_send`` writes with a deadline
            self._child = child
        # Wait for the ready frame without the lock: ``embed`` meanwhile sees "starting".
        try:
            kind, payload = _receive(child, time.monotonic() + _READY_TIMEOUT_S)
            if kind != b"R" or json.loads(payload) != {"dimensions": self._dimensions}:
                raise ChildFailed(f"a first frame of kind {kind!r}: {payload[:200]!r}")
        except (ChildFailed, ValueError) as exc:  # ValueError: the frame is not JSON
            with self._lock:
                if self._child is child:
                    self._fail(f"did not start: {exc}")
            return
        with self._lock:
            if self._child is child and self._state in ("starting", "restarting"):
                self._state = "running"
                self._settled.notify_all()
                log.info("%s %d: running", self._role, child.pid)

    def _fail(self, why: str) -> None:
        """Count and log a failure, stop the child, and start another unless too many failed
        in a row (called under the lock)."""
        self.failures += 1
        self._stop_child()
        if self._state == "closed":
            return
        if self._starts_in_a_row >= MAX_STARTS:
            self._state = "given up"
            self._settled.notify_all()
            log.warning(
                "%s %s; %d starts in a row without an answer, so its passes run in the "
                "server's process from now on",
                self._role,
                why,
                self._starts_in_a_row,
            )
            return
        self._state = "restarting"
        log.warning("%s %s; its passes run in the server's process until it restarts", self._role, why)
        self.start()

    def _stop_child(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                stream.close()  # the child reads EOF and exits
        try:
            child.wait(timeout=1)  # a live child exits at once on EOF; a hung one is killed
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def one_blas_thread() -> dict[str, str]:
    """This environment, with OpenBLAS on one thread: the child runs its passes on one core, so
    BLAS' own threads would only sleep (``blas.single_threaded_blas`` pins them in every pass)."""
    return {**os.environ, "OPENBLAS_NUM_THREADS": "1"}


def _send(child: subprocess.Popen[bytes], body: bytes, deadline: float) -> None:
    stdin = child.stdin
    if stdin is None or stdin.closed:
        raise ChildFailed("its pipe is closed")
    try:
        write_frame(stdin.fileno(), body, deadline)
    except (OSError, ValueError) as exc:  # a broken pipe, or closed under us
        raise ChildFailed(f"could not be written to: {exc!r}") from exc


def _receive(child: subprocess.Popen[bytes], deadline: float) -> tuple[bytes, bytes]:
    stdout = child.stdout
    if stdout is None or stdout.closed:
        raise ChildFailed("its pipe is closed")
    body = read_frame(stdout.fileno(), deadline)
    return body[:1], body[1:]


def read_frame(fd: int, deadline: float = FOREVER) -> bytes:
    """One frame's body from the raw pipe ``fd``; ``ChildFailed`` when the pipe closes first, or
    when ``deadline`` (``time.monotonic``) passes."""
    (length,) = _LENGTH.unpack(_read(fd, _LENGTH.size, deadline))
    if not 1 <= length <= _MAX_FRAME:
        raise ChildFailed(f"a frame of {length} bytes")
    return _read(fd, length, deadline)


def write_frame(fd: int, body: bytes, deadline: float = FOREVER) -> None:
    """One frame to the raw pipe ``fd``. With a ``deadline`` the pipe's write end is non-blocking
    (the server's), so a long text to a child that stopped reading fails in time (``ChildFailed``)
    instead of blocking on a full pipe."""
    data = memoryview(_LENGTH.pack(len(body)) + body)
    while data:
        if deadline != FOREVER:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                raise ChildFailed("took no request in time")
        try:
            data = data[os.write(fd, data) :]
        except BlockingIOError:
            continue


def _read(fd: int, n: int, deadline: float) -> bytes:
    """``n`` bytes from the raw pipe ``fd`` (unbuffered, so ``select`` tells the truth)."""
    chunks: list[bytes] = []
    while n:
        try:
            if deadline != FOREVER:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    raise ChildFailed("gave no answer in time")
            chunk = os.read(fd, n)
        except (OSError, ValueError) as exc:  # the pipe closed under us (``close`` meanwhile)
            raise ChildFailed(f"its pipe failed: {exc!r}") from exc
        if not chunk:
            raise ChildFailed("exited")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


_children_lock = threading.Lock()
_children: dict[Path, QueryProcess] = {}


def shared(model_dir: Path, dimensions: int) -> QueryProcess:
    """The one child of the process for ``model_dir``, started when first asked for (every memory
    opened in the process shares it, as they share the model)."""
    key = model_dir.resolve()
    with _children_lock:
        process = _children.get(key)
        if process is None or process.state in ("closed", "given up"):
            process = _children[key] = QueryProcess(model_dir, dimensions)
            process.start()
        return process


@atexit.register
def _close_children() -> None:
    with _children_lock:
        for process in _children.values():
            process.close()
        _children.clear()
