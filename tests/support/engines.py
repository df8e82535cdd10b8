"""A recording extractor for pipeline tests: one atom per message, failures on demand."""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.errors import EngineError
from memstrata.models import Atom, AtomDraft, AtomType, DedupDecision, ExtractionWindow


class RecordingExtractor:
    """Extracts ``"<speaker> said: <content>"`` per new message; records every window it saw.

    ``fail_next(n)`` makes the next ``n`` calls raise ``EngineError`` (as a model outage would).
    """

    def __init__(self) -> None:
        self.windows: list[ExtractionWindow] = []
        self._failures = 0

    def fail_next(self, n: int = 1) -> None:
        self._failures = n

    async def extract(self, window: ExtractionWindow) -> list[AtomDraft]:
        self.windows.append(window)
        if self._failures:
            self._failures -= 1
            raise EngineError("scripted engine failure")
        return [
            AtomDraft(AtomType.EPISODIC, f"{m.name or m.role} said: {m.content}", 50, "talk", (m.id,))
            for m in window.new
        ]


class NoDedup:
    async def decide(
        self, drafts: Sequence[AtomDraft], candidates: Sequence[Sequence[Atom]]
    ) -> list[DedupDecision]:
        return []
