"""Who does the thinking at each stage: L1 extraction and dedup, L2 consolidation, L3 writing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from memstrata.models import (
    Atom,
    AtomDraft,
    ConsolidationRequest,
    ConsolidationResult,
    DedupDecision,
    ExtractionWindow,
    PersonaRequest,
)

# --- engines (L1) ---------------------------------------------------------------------------------


class Extractor(Protocol):
    """Turns a window of messages into atom drafts. Raises ``EngineError`` when it cannot."""

    async def extract(self, window: ExtractionWindow) -> list[AtomDraft]: ...


class Deduplicator(Protocol):
    """Decides, per draft, against that draft's candidate atoms (same tenant, current only).

    Returns one decision per draft index it has an opinion on; a missing index means STORE.
    """

    async def decide(
        self, drafts: Sequence[AtomDraft], candidates: Sequence[Sequence[Atom]]
    ) -> list[DedupDecision]: ...


class SceneWriter(Protocol):
    """Consolidates atoms into the scene documents of ``request.folder`` (and nowhere else).

    Rules: update an existing scene by default; create at most one new scene per call; when at
    ``max_scenes``, merge 2-4 similar scenes before creating one; delete a file by writing
    ``[DELETED]``. Raises ``EngineError`` when it cannot finish (the pipeline restores the backup).
    """

    async def consolidate(self, request: ConsolidationRequest) -> ConsolidationResult: ...


class PersonaWriter(Protocol):
    """Writes the persona body (Markdown, no navigation). Touches ``request.folder`` at most.
    Raises ``EngineError`` when it cannot finish (the pipeline restores the backup)."""

    async def write(self, request: PersonaRequest) -> str: ...
