"""What every importer produces: sessions of messages ready for ``capture``."""

from __future__ import annotations

from dataclasses import dataclass, field

from memstrata.layers.l0.recorder import CaptureResult
from memstrata.models import NewMessage, Tenant


@dataclass(frozen=True, slots=True)
class ImportSession:
    """One conversation channel of one tenant, with its messages in capture order."""

    tenant: Tenant
    session_key: str
    session_id: str
    messages: tuple[NewMessage, ...]


@dataclass(slots=True)
class ImportReport:
    """What ``import_sessions`` stored, per message outcome (see ``CaptureResult``), and what
    processing did: sessions ``extracted``, runs that ``failed`` (L1 sessions and L2/L3 tenants,
    each recorded in ``status`` and retried later) and the ``atoms`` L1 made."""

    sessions: int = 0
    stored: int = 0
    duplicates: int = 0
    repeated: int = 0
    dropped: int = 0
    degradations: list[str] = field(default_factory=list)
    extracted: int = 0
    failed: int = 0
    atoms: int = 0

    def add(self, r: CaptureResult) -> None:
        self.stored += len(r.stored)
        self.duplicates += len(r.duplicates)
        self.repeated += len(r.repeated)
        self.dropped += len(r.dropped)
        self.degradations += [d for d in r.degradations if d not in self.degradations]
