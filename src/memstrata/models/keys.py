"""API keys of a server: what each one reaches. The key itself is never stored, only its digest."""

from __future__ import annotations

from collections.abc import Iterable
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


def unguarded_keys(keys: Iterable[ApiKey], admin_key_set: bool) -> str | None:
    """The warning ``memstrata keys create`` and ``memstrata serve`` give when active scoped keys
    exist and no admin key is set: a server without ``MEMSTRATA_API_KEY`` is open (loopback only)
    and takes any bearer token as the admin's, so those keys restrict nothing. None otherwise."""
    active = sum(1 for k in keys if k.active)
    if admin_key_set or not active:
        return None
    return (
        f"{active} scoped key{'s' if active != 1 else ''} exist{'' if active != 1 else 's'} but no admin key "
        "is set (MEMSTRATA_API_KEY): a server without one accepts any bearer token as the admin's, "
        "so scoped keys restrict nothing. Set MEMSTRATA_API_KEY where the server runs."
    )
