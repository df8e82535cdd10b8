"""``memstrata worker``: the pipeline in a process of its own.

A worker runs everything the pipeline does (the embedding backlog, L1 extraction, L2 and L3, the
retention sweep) against a store, and meets servers only through it: the durable backlog, timers
and cursors are the queue, and leases decide who runs each session or tenant (``Leases``). On
PostgreSQL any number of workers and servers share one database. On a data directory the server
is the owner (its writer lock) and its workers join it (``SqliteStore(joins=...)``): claims and
mirror writes are then kept apart across the processes, and a worker stops when its owner is gone.

``memstrata serve`` starts ``server.workers`` of them (``Workers``) at ``server.worker_nice``, a
lower CPU priority than its own, so the kernel, not the server, makes requests go first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from memstrata.memory import AsyncMemory

log = logging.getLogger(__name__)
POLL_SECONDS = 1.0  # how often a worker looks at the store for work (no capture can wake it)
OWNER_WAIT_SECONDS = 60.0
RESTART_SECONDS = 5.0  # a worker that keeps dying is started again at most this often
DRAIN_SHARE = 0.8  # of server.shutdown_grace_seconds: a stopped worker's L1 drain  # a worker ``serve`` started waits this long for it to open the store


def alive(pid: int) -> bool:
    """Whether process ``pid`` lives (another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def run(
    location: str | Path,
    *,
    owner: int | None = None,
    stop: asyncio.Event | None = None,
    wait: float = OWNER_WAIT_SECONDS,
    opened: Callable[[AsyncMemory], None] | None = None,
) -> None:
    """Run the pipeline on ``location`` until ``stop`` is set, the owner (a pid) dies or the
    pipeline fails; then close (an L1 window in flight is rolled back, never half-written: its
    cursor moves only with its atoms). ``opened`` is told the memory once it is open."""
    stop = stop or asyncio.Event()
    # The worker embeds in its own threads at its own priority: no child processes of its own.
    mem = await AsyncMemory.open_shared(
        location,
        worker=True,
        owner=owner,
        wait=wait,
        poll=POLL_SECONDS,
        embedding={"query_process": False},
    )
    if opened is not None:
        opened(mem)
    orphaned = False
    try:
        while not stop.is_set():
            if owner is not None and not alive(owner):
                log.warning("worker: its owner (pid %d) is gone; stopping", owner)
                orphaned = True
                break
            mem.check_background()  # a loop that died raises here, and the process exits non-zero
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(POLL_SECONDS):
                    await stop.wait()
    finally:
        # Asked to stop, a worker extracts what is pending for a bounded time (the server's grace,
        # less a margin for closing); its owner gone, it stops at once (the next owner's
        # workers take the backlog over).
        grace = mem.settings.server.shutdown_grace_seconds * DRAIN_SHARE
        await mem.close(flush=not orphaned, within=grace)


def main(location: str | Path, owner: int | None, nice: int, ready_fd: int | None = None) -> None:
    """The process: lower priority, SIGTERM and SIGINT stop it cleanly, exit 0. A server that
    started it is told once its memory is open (a line on ``ready_fd``)."""
    if nice:
        os.nice(nice)

    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await run(location, owner=owner, stop=stop, opened=lambda _: _tell_ready(ready_fd))

    asyncio.run(serve())


def _tell_ready(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.write(fd, b"ready\n")
            os.close(fd)


class Workers:
    """The worker processes a server starts (``serve --workers N``): started, waited for, started
    again when one dies (a thread checks every ``POLL_SECONDS``; at most once per
    ``RESTART_SECONDS`` each), and stopped."""

    def __init__(self, location: str | Path, count: int, nice: int) -> None:
        self._location = location
        self._count = count
        self._nice = nice
        self.procs: list[subprocess.Popen[bytes]] = []
        self._ready: list[int] = []  # each worker's end of its "ready" pipe, until ``ready``
        self._stopping = threading.Event()
        self._lock = threading.Lock()  # ``procs`` between the watcher and ``stop``

    def start(self) -> None:
        """Start the workers; each waits for this process to open the store, and stops if it dies."""
        for _ in range(self._count):
            proc, fd = self._spawn()
            self.procs.append(proc)
            self._ready.append(fd)
        if self._count:
            threading.Thread(target=self._watch, name="memstrata-workers", daemon=True).start()

    def _spawn(self) -> tuple[subprocess.Popen[bytes], int]:
        # OpenBLAS on one thread: a worker's batches spread over threads of its own, each pass
        # pinned to one BLAS thread (``blas.py``), so BLAS' own threads would only sleep.
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
        where: list[str] = []
        if isinstance(self._location, str) and "://" in self._location:
            env["MEMSTRATA_STORE__URL"] = self._location  # not on a command line: it may hold a password
        else:
            where = ["--data-dir", str(self._location)]
        command = [sys.executable, "-m", "memstrata", "worker", *where]
        command += ["--owner", str(os.getpid()), "--nice", str(self._nice)]
        read, write = os.pipe()
        try:
            proc = subprocess.Popen(
                [*command, "--ready-fd", str(write)], env=env, stdin=subprocess.DEVNULL, pass_fds=(write,)
            )
        except BaseException:
            os.close(read)
            raise
        finally:
            os.close(write)
        return proc, read

    def _watch(self) -> None:
        started = [time.monotonic()] * len(self.procs)
        while not self._stopping.wait(POLL_SECONDS):
            for i, proc in enumerate(list(self.procs)):
                if proc.poll() is None or time.monotonic() - started[i] < RESTART_SECONDS:
                    continue
                with self._lock:
                    if self._stopping.is_set():
                        return
                    log.warning(
                        "worker pid %d ended (status %s): starting another", proc.pid, proc.returncode
                    )
                    self.procs[i], fd = self._spawn()
                    started[i] = time.monotonic()
                os.close(fd)  # nobody waits for it: the server is up already

    def ready(self, timeout: float) -> None:
        """Wait until every worker has opened the store (up to ``timeout`` seconds in all): a
        server that listens before then could be stopped before its workers can drain. A worker
        that died or is slow is logged, not waited for."""
        deadline = time.monotonic() + timeout
        for proc, fd in zip(self.procs, self._ready, strict=True):
            left = max(0.0, deadline - time.monotonic())
            readable, _, _ = select.select([fd], [], [], left)
            said = os.read(fd, 16) if readable else b""
            os.close(fd)
            if said != b"ready\n":
                log.warning("worker pid %d is not ready (exit status %s)", proc.pid, proc.poll())
        self._ready = []

    def signal(self) -> None:
        """Ask every worker to stop (SIGTERM): each drains what is pending, within its share of
        the grace period, while the server finishes its requests."""
        with self._lock:
            self._stopping.set()
            for proc in self.procs:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)

    def stop(self, grace: float) -> None:
        """Stop every worker and wait for it (up to ``grace`` seconds in all; then SIGKILL: what a
        killed worker was doing is redone by the next, nothing is lost)."""
        self.signal()
        deadline = time.monotonic() + grace
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("worker pid %d did not stop within %.0f s: killed", proc.pid, grace)
                proc.kill()
                proc.wait()
