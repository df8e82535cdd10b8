"""The process the crash tests kill: capture a LoCoMo document and run L1 on it, session by session.

    python _crash_child.py HOME INPUT MARKERS PIPELINE_JSON [--throttle S] [--hold-at N]

It opens ``Memory.open(HOME, embedder=None, pipeline=<PIPELINE_JSON>)`` (offline engine), then for
each session: ``capture`` its turns, ``end_session``. ``MARKERS/ready`` appears once memory is open.
The offline extractor is wrapped (through the composition root's name for it) so the parent can
place a kill: ``--throttle`` sleeps after each extraction (windows take long enough to poll between
commits) and ``--hold-at N`` stops inside the N-th extraction call, before that window is committed,
after creating ``MARKERS/hold`` (it waits there to be killed). On a normal exit it prints
``{"extract_calls": n}``, which tells the parent where the last window is.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import memstrata.wiring
from memstrata import Memory
from memstrata.engines.offline import OfflineExtractor
from memstrata.interchange.locomo import parse_locomo
from memstrata.models import AtomDraft, ExtractionWindow

HOLD_SECONDS = 120.0  # far beyond any test's patience: the parent kills first


class PacedExtractor(OfflineExtractor):
    """The offline extractor, with a pause after each call and an optional hold at call N."""

    throttle = 0.0
    hold_at = 0
    markers = Path()
    calls = 0

    async def extract(self, window: ExtractionWindow) -> list[AtomDraft]:
        """The offline engine's drafts, returned after the configured pause (or never, at the hold)."""
        drafts = await super().extract(window)
        PacedExtractor.calls += 1
        if PacedExtractor.calls == self.hold_at:
            (self.markers / "hold").touch()
            await asyncio.sleep(HOLD_SECONDS)
        if self.throttle:
            await asyncio.sleep(self.throttle)
        return drafts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("home", type=Path)
    parser.add_argument("input", type=Path)
    parser.add_argument("markers", type=Path)
    parser.add_argument("pipeline", type=json.loads)
    parser.add_argument("--throttle", type=float, default=0.0)
    parser.add_argument("--hold-at", type=int, default=0)
    args = parser.parse_args()
    PacedExtractor.throttle = args.throttle
    PacedExtractor.hold_at = args.hold_at
    PacedExtractor.markers = args.markers
    # The composition root picks the offline engine by this name; the rest of the wiring is real.
    memstrata.wiring.OfflineExtractor = PacedExtractor  # type: ignore[attr-defined]

    sessions = parse_locomo(json.loads(args.input.read_text()))
    with Memory.open(args.home, embedder=None, pipeline=args.pipeline) as mem:
        (args.markers / "ready").touch()
        for s in sessions:
            tenant = s.tenant
            mem.capture(
                list(s.messages), session_key=s.session_key, user_id=tenant.user_id, agent_id=tenant.agent_id
            )
            mem.end_session(s.session_key, user_id=tenant.user_id, agent_id=tenant.agent_id)
    print(json.dumps({"extract_calls": PacedExtractor.calls}), flush=True)


if __name__ == "__main__":
    main()
