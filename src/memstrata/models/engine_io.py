"""What the engines see and answer, stage by stage: L1 windows and drafts, dedup decisions, L2
consolidation results. (The L2 and L3 requests carry the folder a writer may touch, a port: they
live beside their ports in ``memstrata.ports.engines``.)"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from memstrata.models.records import AtomType, Message, Tenant


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
class ConsolidationResult:
    """What a scene writer did. ``placed`` maps atom ids to the scene file that now holds them
    (also atoms moved by a merge); atoms it leaves out are attributed by the pipeline to the most
    similar scene. ``deferred`` atoms are offered again with the next batch (ignored when final)."""

    placed: Mapping[str, str] = field(default_factory=dict)
    deferred: tuple[str, ...] = ()
    persona_requests: tuple[str, ...] = ()  # reasons from ``[PERSONA_UPDATE_REQUEST]``
