"""Loaded by every Python process started with this folder on ``PYTHONPATH`` (``bench/lock_hold.py``
puts it there for ``memstrata serve`` and the workers it starts): when ``LOCKHOLD_BENCH_DIR``
is set, each outermost ``Database.tx()`` writes one JSON line to ``<dir>/tx-<pid>.jsonl``: its
kind (the store method that opened it and the first caller outside the stores), how long it
waited for ``BEGIN IMMEDIATE`` and how long it held SQLite's write lock (BEGIN to COMMIT). Each
hold of a JSONL mirror's lock file (``MirrorKeeper._other_writers``: the lock a capture in the
server and a commit or sweep in the worker take in turn) writes one too, its kind
``mirror <folder>: <keeper method><-caller``."""

from __future__ import annotations

import os

_DIR = os.environ.get("LOCKHOLD_BENCH_DIR")


def _kind(frame: object) -> str:
    """``store_method<-caller`` for the frames above ``tx``: the innermost store method, and the
    first memstrata function outside the stores (who asked)."""
    store = caller = ""
    f = frame
    while f is not None:
        path = f.f_code.co_filename  # type: ignore[attr-defined]
        if "memstrata" in path and "contextlib" not in path:
            if "/stores/" in path:
                store = store or f.f_code.co_name  # type: ignore[attr-defined]
            elif store:
                caller = f"{os.path.basename(path)[:-3]}.{f.f_code.co_name}"  # type: ignore[attr-defined]
                break
        f = f.f_back  # type: ignore[attr-defined]
    return f"{store}<-{caller}" if caller else store


def _install(folder: str) -> None:
    import json
    import sys
    import threading
    import time
    from contextlib import contextmanager

    from memstrata.stores.sqlite import db as dbmod

    original = dbmod.Database.tx
    out = open(os.path.join(folder, f"tx-{os.getpid()}.jsonl"), "a", buffering=1)  # noqa: SIM115
    role = "worker" if "worker" in sys.argv else "server"
    write_lock = threading.Lock()

    @contextmanager
    def tx(self):  # type: ignore[no-untyped-def]
        if self._depth and self._writing == threading.get_ident():
            with original(self) as conn:
                yield conn
            return
        kind = _kind(sys._getframe(1))
        t0 = time.monotonic()
        held = None
        error = ""
        try:
            with original(self) as conn:
                held = time.monotonic()
                yield conn
        except BaseException as exc:
            error = type(exc).__name__ + (": " + str(exc)[:120])
            raise
        finally:
            end = time.monotonic()
            line = {
                "role": role,
                "pid": os.getpid(),
                "kind": kind,
                "t": time.time(),
                "wait_ms": round(((held or end) - t0) * 1000, 3),
                "hold_ms": round((end - held) * 1000, 3) if held is not None else None,
                "error": error,
            }
            with write_lock:
                out.write(json.dumps(line) + "\n")

    dbmod.Database.tx = tx  # type: ignore[method-assign]

    from memstrata.stores.sqlite import mirrored

    held_mirror = mirrored.MirrorKeeper._other_writers

    @contextmanager
    def other_writers(self):  # type: ignore[no-untyped-def]
        if self._shared is None:
            with held_mirror(self):
                yield
            return
        f = sys._getframe(2)  # past contextlib: the keeper's method
        kind = f"mirror {self.folder.name}: {f.f_code.co_name}<-" + _kind(f).rsplit("<-", 1)[-1]
        t0 = time.monotonic()
        held = None
        try:
            with held_mirror(self):
                held = time.monotonic()
                yield
        finally:
            end = time.monotonic()
            line = {
                "role": role,
                "pid": os.getpid(),
                "kind": kind,
                "t": time.time(),
                "wait_ms": round(((held or end) - t0) * 1000, 3),
                "hold_ms": round((end - held) * 1000, 3) if held is not None else None,
                "error": "",
            }
            with write_lock:
                out.write(json.dumps(line) + "\n")

    mirrored.MirrorKeeper._other_writers = other_writers  # type: ignore[method-assign]


if _DIR:
    _install(_DIR)
