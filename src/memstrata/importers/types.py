"""What every importer produces: sessions of messages ready for ``capture``."""

from __future__ import annotations

from dataclasses import dataclass

from memstrata.models import NewMessage, Tenant


@dataclass(frozen=True, slots=True)
class ImportSession:
    """One conversation channel of one tenant, with its messages in capture order."""

    tenant: Tenant
    session_key: str
    session_id: str
    messages: tuple[NewMessage, ...]
