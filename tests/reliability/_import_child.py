"""The process the import crash suite kills: ``memstrata import FILE`` with a tick counter.

    python _import_child.py HOME INPUT TIMELINE [--kill-at N]

It runs the real CLI command (``memstrata --data-dir HOME import INPUT``: capture, L1, vectors, L2
and L3) in this process, with two test hooks installed first:

- a tick counter: every outer SQLite transaction of the store ticks twice (its writes done but not
  yet committed, then committed) and so does every file rename (``os.replace``/``os.rename``: the
  last step of each atomic file write, scene folder snapshot and rename). These ticks are the
  run's timeline; ``--kill-at N`` sends this process SIGKILL at tick N (nothing after it runs: no
  rollback, no ``finally``, no flush). Without it the run completes and the labels of all ticks
  are written to TIMELINE (one per line), so the parent can draw kill points over them.
- a frozen clock (as the composition root's system clock), so that a clean run and a killed then
  resumed run stamp the same times and their files can be compared byte for byte.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, ClassVar

import memstrata.wiring
from memstrata.clock import FakeClock
from memstrata.stores.sqlite.db import Database

FROZEN_MS = 1_780_000_000_000  # 2026-05-28: any fixed instant does


class FrozenClock(FakeClock):
    def __init__(self) -> None:
        super().__init__(FROZEN_MS)


class Ticks:
    kill_at = 0
    labels: ClassVar[list[str]] = []

    @classmethod
    def tick(cls, label: str) -> None:
        cls.labels.append(f"{label} ({_caller()})")
        if len(cls.labels) == cls.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)


def _caller() -> str:
    """The innermost memstrata function outside the store and this file: what the tick is part of."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if "memstrata" in name and "stores" not in name and "atomic" not in name and "contextlib" not in name:
            return f"{Path(name).parent.name}/{Path(name).name}:{frame.f_code.co_name}"
        frame = frame.f_back
    return "?"


def install_hooks() -> None:
    original_tx = Database.tx

    @contextmanager
    def tx(self: Database) -> Iterator[Any]:
        outer = self._depth == 0
        with original_tx(self) as conn:
            yield conn
            if outer:
                Ticks.tick("transaction written, not committed")
        if outer:
            Ticks.tick("transaction committed")

    Database.tx = tx  # type: ignore[method-assign]

    def counted(fn: Callable[..., None], what: str) -> Callable[..., None]:
        def run(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            Ticks.tick(f"before {what} {Path(dst).name}")
            fn(src, dst, *args, **kwargs)
            Ticks.tick(f"after {what} {Path(dst).name}")

        return run

    os.replace = counted(os.replace, "replace")
    os.rename = counted(os.rename, "rename")
    memstrata.wiring.SystemClock = FrozenClock  # type: ignore[attr-defined, assignment]


def main() -> None:
    home, source, timeline = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    if "--kill-at" in sys.argv:
        Ticks.kill_at = int(sys.argv[sys.argv.index("--kill-at") + 1])
    install_hooks()
    from memstrata.cli.main import app

    try:
        app(["--data-dir", home, "import", source], prog_name="memstrata")
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    timeline.write_text("".join(f"{label}\n" for label in Ticks.labels))
    sys.exit(code)


if __name__ == "__main__":
    main()
