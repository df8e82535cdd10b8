"""Who does the thinking at each stage: L1 extraction and dedup, L2 consolidation, L3 writing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from memstrata.models import (
    Atom,
    AtomDraft,
    ConsolidationResult,
    DedupDecision,
    ExtractionWindow,
    Scene,
    Tenant,
    Vectors,
)
from memstrata.ports.folder import Folder

# --- engines (L1) ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConsolidationRequest:
    """What a scene writer consolidates in one call: one batch of a tenant's L2 run.

    ``atoms`` are new atoms (plus any the writer deferred earlier in the run), by seq;
    ``members`` maps each scene file to its current atoms; ``vectors`` maps atom ids to unit
    vectors when the store has them (empty without an embedder); ``total_atoms`` is how many
    current atoms the tenant has (this batch, the scenes and the rest of the run's backlog).
    """

    tenant: Tenant
    folder: Folder  # the tenant's scene documents: all the writer may touch
    atoms: tuple[Atom, ...]
    scenes: tuple[Scene, ...]
    members: Mapping[str, tuple[Atom, ...]]
    vectors: Mapping[str, Vectors]
    max_scenes: int
    final: bool  # the last batch of the run: every atom must be placed
    now: int
    total_atoms: int = 0
    # Scenes that held atoms since removed (deleted, expired, forgotten): the writer sees them
    # blank (in ``scenes`` and ``folder``; readers of the store still see the old text) and
    # rewrites each from its ``members`` alone; one it leaves unwritten (one with no member left)
    # is removed after the call, so nothing of a removed atom stays in a scene.
    rewrite: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PersonaRequest:
    """What a persona writer sees. ``folder`` holds ``persona.md`` alone, with the current body
    (navigation stripped) during the run; ``first`` is True when there is no persona yet; ``changed`` names scenes changed since the
    last persona; ``atoms`` are the highest-priority persona and instruction atoms, ``events`` the
    highest-priority episodic ones."""

    tenant: Tenant
    folder: Folder
    current: str
    first: bool
    scenes: tuple[Scene, ...]
    changed: tuple[str, ...]
    atoms: tuple[Atom, ...]
    reasons: tuple[str, ...]
    now: int
    events: tuple[Atom, ...] = ()


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
