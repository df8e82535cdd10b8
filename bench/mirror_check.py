"""What keeping the JSONL mirrors equal to the database costs, against a bare SQLite open.

    python bench/mirror_check.py [--days 365] [--per-day 100]

Builds a store whose mirror spreads over ``--days`` daily files, then measures: opening the store
(the mirrors' ends are read and compared with the tables), ``mirror_check(full=False)`` (ends and
a line count) and ``mirror_check()`` (every line parsed and compared), each the best of 5, against
opening the same database file with bare ``sqlite3`` and counting its messages.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memstrata.models import Message, Role, Tenant
from memstrata.stores.sqlite.store import SqliteStore

DAY_MS = 86_400_000


def best_ms(fn: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return min(times)


def build(home: Path, days: int, per_day: int) -> None:
    store = SqliteStore(home)
    for d in range(days):
        batch = [
            Message(
                f"m{d}-{i}", Tenant(), "s", "s", Role.USER, f"message {i} of day {d} " * 8, d * DAY_MS, 0, "A"
            )
            for i in range(per_day)
        ]
        store.messages.append([(m, m.content) for m in batch])
    store.close()
    # One file per day, as a year of use leaves it (this run wrote everything today).
    folder = home / "conversations"
    lines = [ln for f in sorted(folder.glob("*.jsonl")) for ln in f.read_text().splitlines()]
    for f in folder.glob("*.jsonl"):
        f.unlink()
    for d in range(days):
        part = lines[d * per_day : (d + 1) * per_day]
        (folder / f"{2000 + d // 365}-day{d % 365:03d}.jsonl").write_text("\n".join(part) + "\n")


def bare_open(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("SELECT COUNT(*) FROM messages").fetchone()
    conn.close()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--per-day", type=int, default=100)
    a = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-mirror-"))
    build(home, a.days, a.per_day)
    base = best_ms(lambda: bare_open(home / "memstrata.db"))
    opened = best_ms(lambda: SqliteStore(home).close())
    n = a.days * a.per_day
    line = f"mirror_check: open {opened:.1f} ms vs bare sqlite open {base:.1f} ms (x{opened / base:.1f})"
    store = SqliteStore(home)
    if hasattr(store, "mirror_check"):  # (absent before: the script also times older versions' open)
        assert store.mirror_check() is None
        quick = best_ms(lambda: store.mirror_check(full=False))
        full = best_ms(lambda: store.mirror_check(), runs=2)
        line += f"; quick check {quick:.0f} ms, full check {full:.0f} ms ({full * 1000 / n:.1f} us/line)"
    store.close()
    print(f"{line} ({a.days} files, {n:,} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
