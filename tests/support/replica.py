"""One pipeline replica on a shared PostgreSQL database, for the multi-replica tests.

    python -m tests.support.replica URL LOG [--pace SECONDS] [--hold-at N]

It opens the database as a memory with the offline engines and short timers, runs the pipeline in
the background (what ``memstrata serve`` runs in its lifespan) until SIGTERM, and appends one JSON
line to ``LOG`` per extraction: ``{"pid", "event": "start"|"done", "tenant", "session", "seqs"}``
(``done`` just before the window's atoms are handed back for commit). ``--pace`` makes each
extraction take that long (as a model call would), so one replica cannot do everything before
the other looks. ``--hold-at N`` makes its
N-th extraction wait forever after writing its ``start`` line: the parent kills it there.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import signal
from pathlib import Path
from typing import Any

from memstrata.engines.offline import OfflineExtractor
from memstrata.memory import AsyncMemory
from memstrata.models import AtomDraft, ExtractionWindow
from memstrata.settings import load_settings
from memstrata.wiring import assemble

# Seconds, not minutes: the tests wait for the pipeline to go idle.
SETTINGS: dict[str, Any] = {
    "pipeline": {
        "every_n_conversations": 3,
        "warm_up": False,
        "l1_idle_timeout_seconds": 0.5,
        "retry_delay_seconds": 0.5,
        "l2_delay_after_l1_seconds": 0.5,
        "l2_min_interval_seconds": 1.0,
        "l2_max_interval_seconds": 3600.0,
    },
    "persona": {"trigger_every_n": 5},
}


class LoggedExtractor(OfflineExtractor):
    def __init__(self, log: Path, hold_at: int, pace: float) -> None:
        super().__init__()
        self._log = log
        self._hold_at = hold_at
        self._pace = pace
        self._calls = 0

    async def extract(self, window: ExtractionWindow) -> list[AtomDraft]:
        self._calls += 1
        self._write("start", window)
        if self._calls == self._hold_at:
            await asyncio.sleep(3600)  # killed here, mid-run, holding the session's lease
        await asyncio.sleep(self._pace)
        drafts = await super().extract(window)
        self._write("done", window)
        return drafts

    def _write(self, event: str, window: ExtractionWindow) -> None:
        line = {
            "pid": os.getpid(),
            "event": event,
            "tenant": window.tenant.user_id,
            "session": window.session_key,
            "seqs": [m.seq for m in window.new],
        }
        with open(self._log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("log", type=Path)
    ap.add_argument("--hold-at", type=int, default=0)
    ap.add_argument("--pace", type=float, default=0.0)
    a = ap.parse_args()
    settings = load_settings(**SETTINGS)
    parts = await asyncio.to_thread(assemble, settings, a.url, embedder=None)
    parts = dataclasses.replace(parts, extractor=LoggedExtractor(a.log, a.hold_at, a.pace))
    memory = AsyncMemory(parts, settings)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    memory.start_background()
    print("ready", flush=True)
    await stop.wait()
    await memory.close(flush=False)


if __name__ == "__main__":
    asyncio.run(main())
