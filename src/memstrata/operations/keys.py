"""Scoped API keys: create one for a tenant (or a few), list, revoke, and find the key a token is.
Over HTTP these are admin routes (``/v1/keys``): they need the admin key."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Annotated, ClassVar

from pydantic import Field

from memstrata.models import ApiKey, IssuedKey
from memstrata.operations.base import Operation, Route


@dataclass(frozen=True, slots=True)
class CreateKey(Operation[IssuedKey]):
    """A new key reaching ``tenants`` (``[(user_id, agent_id or None), ...]``; ``None``: every
    agent of that user). The answer holds the key itself, which is stored only as a digest:
    keep it, it cannot be shown again."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/keys", idempotent=False)
    tenants: Annotated[Sequence[Sequence[str | None]], Field(min_length=1, max_length=100)]
    _: KW_ONLY
    label: Annotated[str, Field(max_length=200)] = ""


@dataclass(frozen=True, slots=True)
class Keys(Operation[list[ApiKey]]):
    """Every key (revoked ones too, with their time), oldest first; never the keys themselves."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/keys")


@dataclass(frozen=True, slots=True)
class RevokeKey(Operation[ApiKey]):
    """Revoke a key: from now its requests fail on every server of this store. Revoking a
    revoked key keeps its first time; an unknown id is ``NotFoundError``."""

    ROUTE: ClassVar[Route] = Route("DELETE", "/v1/keys/{key_id}")
    key_id: Annotated[str, Field(min_length=1, max_length=64)]


@dataclass(frozen=True, slots=True)
class VerifyKey(Operation[ApiKey | None]):
    """The active key ``token`` is, else ``None`` (unknown or revoked). Reads the store every
    time: a revocation by another process counts at once."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/keys/verify")
    token: Annotated[str, Field(min_length=1, max_length=200)]
