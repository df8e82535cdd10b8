"""What the engines see and answer, stage by stage: L1 windows and drafts, dedup decisions,
L2 consolidation requests and results, L3 persona requests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from memstrata.models.records import Atom, AtomType, Message, Tenant
from memstrata.models.scenes import Scene
from memstrata.models.search import Vectors

if TYPE_CHECKING:  # a contract, not a record: ports.py imports the models at run time
    from memstrata.ports import Folder


@dataclass(frozen=True, slots=True)
class ExtractionWindow:
    """What an extractor sees: up to N new messages, plus a few earlier ones as background only."""

    tenant: Tenant
    session_key: str
    new: tuple[Message, ...]
    background: tuple[Message, ...] = ()


@dataclass(frozen=True, slots=True)
class AtomDraft:
    """An atom proposed by an extractor. ``source_message_ids`` must name messages of the window."""

    type: AtomType
    content: str
    priority: int = 50
    scene_name: str = ""
    source_message_ids: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


class DedupAction(StrEnum):
    STORE = "store"  # new information: keep as a new atom
    UPDATE = "update"  # corrects one existing atom: the target is superseded by the draft
    MERGE = "merge"  # combines with existing atoms: targets superseded by ``merged_content``
    SKIP = "skip"  # already known: drop the draft


@dataclass(frozen=True, slots=True)
class DedupDecision:
    """What to do with ``drafts[index]``. ``targets`` are ids from that draft's candidates only."""

    index: int
    action: DedupAction
    targets: tuple[str, ...] = ()
    merged_content: str | None = None


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
    # Scenes that held atoms since removed (deleted, expired, forgotten): the runner has blanked
    # them; the writer rewrites each from its ``members`` alone (one with none is left blank and
    # removed by the cleanup), so nothing of a removed atom stays in a scene.
    rewrite: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ConsolidationResult:
    """What a scene writer did. ``placed`` maps atom ids to the scene file that now holds them
    (also atoms moved by a merge); atoms it leaves out are attributed by the pipeline to the most
    similar scene. ``deferred`` atoms are offered again with the next batch (ignored when final)."""

    placed: Mapping[str, str] = field(default_factory=dict)
    deferred: tuple[str, ...] = ()
    persona_requests: tuple[str, ...] = ()  # reasons from ``[PERSONA_UPDATE_REQUEST]``


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
