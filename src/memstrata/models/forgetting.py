"""What forgetting and exporting report: a tenant erased, a retention sweep, an export."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from memstrata.models.records import Tenant


@dataclass(frozen=True, slots=True)
class Erased:
    """What a store removed for one tenant (``Store.erase``), by kind of row."""

    messages: int = 0
    atoms: int = 0  # every version
    vectors: int = 0
    scene_members: int = 0
    sessions: int = 0  # L1 pipeline state rows
    tenant_states: int = 0  # L2/L3 pipeline state rows
    mirror_lines: int = 0  # JSONL mirror lines (0 for a backend without mirrors)

    def __add__(self, other: Erased) -> Erased:
        return Erased(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """What ``forget`` removed: the tenants and, per layer, how much. ``files`` counts the profile
    files removed (scenes, index, persona, backups, set-aside files). ``reclaimed`` is True when
    the store gave the space back (SQLite: the database rewritten by VACUUM and its WAL
    truncated); ``notes`` says what could not be done, in words."""

    tenants: tuple[Tenant, ...] = ()
    erased: Erased = field(default_factory=Erased)
    files: int = 0
    reclaimed: bool = False
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SweepReport:
    """What one retention sweep did. ``messages``: L0 messages past ``capture.retention_days``;
    ``marked``: atoms whose source messages went (they keep their text, flagged
    ``sources_swept``); ``expired``: atoms whose time to live was over; ``aged``: atoms past
    ``retention.atoms_days``; ``tenants``: tenants whose scenes and persona are now rewritten."""

    at: int
    messages: int = 0
    marked: int = 0
    expired: int = 0
    aged: int = 0
    tenants: tuple[Tenant, ...] = ()

    def removed(self) -> int:
        return self.messages + self.expired + self.aged

    def describe(self) -> str:
        return (
            f"{self.messages} messages past retention, {self.expired} expired atoms, "
            f"{self.aged} atoms past retention removed; {self.marked} atoms lost their sources"
        )


@dataclass(frozen=True, slots=True)
class ExportReport:
    """What ``export`` wrote to ``path`` in ``format`` (``jsonl`` or ``tdai``)."""

    path: str
    format: str
    tenants: tuple[Tenant, ...] = ()
    messages: int = 0
    atoms: int = 0  # every version
    scenes: int = 0
    personas: int = 0
    files: int = 0
