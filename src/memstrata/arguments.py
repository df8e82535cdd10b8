"""Checks and conversions of the facade's arguments: a wrong value is a ``ValidationError``
naming the argument, never a traceback from deep inside."""

from __future__ import annotations

from collections.abc import Mapping

from memstrata.errors import ValidationError
from memstrata.models import AtomType, Layer, NewMessage, Tenant
from memstrata.retrieval.presets import HYBRID, KEYWORD_ONLY, VECTOR_ONLY, SearchPlan
from memstrata.settings import Settings

MessageInput = NewMessage | Mapping[str, object]
_PLANS = {"hybrid": HYBRID, "keyword": KEYWORD_ONLY, "vector": VECTOR_ONLY}
MAX_FOLDER_BYTES = 255  # a file name, on every common file system


def tenant(user_id: str, agent_id: str, item: str = "user_id") -> Tenant:
    """The tenant, when its profile folder name (``u=<user>,a=<agent>``, percent-encoded) fits
    in a file name; else a ``ValidationError`` naming ``item``."""
    t = Tenant(user_id, agent_id)
    if len(t.folder.encode()) > MAX_FOLDER_BYTES:
        raise ValidationError(
            f"user_id and agent_id are too long together: their folder name {t.folder[:40]!r}... "
            f"exceeds {MAX_FOLDER_BYTES} bytes",
            item=item,
        )
    return t


def as_message(m: MessageInput, i: int) -> NewMessage:
    if isinstance(m, NewMessage):
        return m
    if not isinstance(m, Mapping):
        raise ValidationError("a message must be a NewMessage or a mapping", item=f"messages[{i}]")
    try:
        return NewMessage(**m)  # type: ignore[arg-type]
    except TypeError as exc:
        raise ValidationError(str(exc), item=f"messages[{i}]") from None


def layer(x: str | Layer) -> Layer:
    try:
        return Layer(str(x).upper())
    except ValueError:
        raise ValidationError(f"unknown layer {x!r}: use L0 or L1", item="layers") from None


def atom_type(x: str | None) -> AtomType | None:
    if x is None:
        return None
    try:
        return AtomType(x)
    except ValueError:
        raise ValidationError(f"unknown atom type {x!r}", item="type") from None


def limit(n: int) -> int:
    if not 1 <= n <= 1000:
        raise ValidationError("limit must be between 1 and 1000", item="limit")
    return n


def plan(mode: str, settings: Settings) -> SearchPlan:
    if mode not in _PLANS:
        raise ValidationError(f"unknown search mode {mode!r}: use hybrid, keyword or vector", item="mode")
    return _PLANS[mode].with_(rrf_k=settings.search.rrf_k, depth=settings.search.candidates)
