"""API keys of a server: what each one reaches. The key itself is never stored, only its digest."""

from __future__ import annotations

from dataclasses import dataclass

# A key's reach: ``(user_id, agent_id)`` pairs; an ``agent_id`` of ``None`` reaches every agent of
# that user.
Reach = tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A scoped key as stored: its public id (``msk_<id>_...`` starts the key), a label for people,
    the tenants it reaches, when it was created and, once revoked, when (epoch ms)."""

    id: str
    label: str
    tenants: Reach
    created_at: int
    revoked_at: int | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True, slots=True)
class IssuedKey:
    """A key just created: the record and the key itself, shown this once."""

    key: ApiKey
    secret: str
