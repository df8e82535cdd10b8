"""Checks and conversions of the facade's arguments: a wrong value is a ``InputError``
naming the argument, never a traceback from deep inside."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memstrata.errors import InputError
from memstrata.models import AtomType, Layer, MetadataFilter, Tenant, metadata_filter
from memstrata.models.json_input import json_object
from memstrata.retrieval.presets import HYBRID, KEYWORD_ONLY, VECTOR_ONLY, SearchPlan
from memstrata.settings import Settings

_PLANS = {"hybrid": HYBRID, "keyword": KEYWORD_ONLY, "vector": VECTOR_ONLY}


def tenant(user_id: object, agent_id: object) -> Tenant:
    """The tenant the caller names. ``None`` is refused rather than guessed (it usually means a
    missing field upstream, and guessing would mix two users' memories)."""
    return Tenant(name(user_id, "user_id"), name(agent_id, "agent_id"))


def name(value: object, item: str) -> str:
    """A tenant or session name: a non-empty string without NUL."""
    if not isinstance(value, str) or not value.strip():
        shown = "None" if value is None else repr(value)[:40]
        raise InputError(f"must be a non-empty string, got {shown} (omit it for 'default')", item=item)
    if "\x00" in value:
        raise InputError("must not contain NUL", item=item)
    return value


def layer(x: str | Layer) -> Layer:
    try:
        found = Layer(str(x).upper())
        if found == Layer.L2:
            raise ValueError(found)
        return found
    except ValueError:
        raise InputError(
            f"unknown layer {x!r}: use L0 or L1 (scenes are read with read_scene)", item="layers"
        ) from None


def atom_type(x: str | None) -> AtomType | None:
    if x is None:
        return None
    try:
        return AtomType(x)
    except ValueError:
        raise InputError(f"unknown atom type {x!r}", item="type") from None


def limit(n: int) -> int:
    if not 1 <= n <= 1000:
        raise InputError("limit must be between 1 and 1000", item="limit")
    return n


def floor(value: float | None, settings: Settings) -> tuple[float, float, float | None]:
    """The relevance floor as ``(min_score, query_floor, standing_floor)``. A call that names no
    ``min_score`` gets the store's: hits below ``search.min_score`` are left out, and a query none
    of whose hits reaches ``search.query_floor`` finds nothing, but a standing preference or
    instruction whose cosine with a request of the user's own reaches ``search.standing_floor`` is
    found. A call that names one (a number in [0, 1]) gets just that: hits below it are left out,
    so ``min_score=0`` shows everything fusion found."""
    if value is None:
        s = settings.search
        return s.min_score, s.query_floor, s.standing_floor
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise InputError(f"must be a number between 0 and 1, got {value!r}", item="min_score")
    return float(value), 0.0, None


def messages(value: object) -> list[Any]:
    """The messages of one capture: a non-empty list. ``[]`` and ``None`` are the same mistake
    (nothing to store, usually an upstream bug) and get the same ``InputError`` on every surface
    (the library, HTTP's 422, the HTTP client), rather than an empty result on one and an error on
    another."""
    if value is None or isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        shown = "None" if value is None else type(value).__name__
        raise InputError(f"must be a list of messages, got {shown}", item="messages")
    if not value:
        raise InputError("must hold at least one message, got an empty list", item="messages")
    return list(value)


def note(text: object) -> str:
    """A note to remember: a non-blank string."""
    if not isinstance(text, str):
        raise InputError(f"must be a string, got {type(text).__name__}", item="text")
    if not text.strip():
        raise InputError("must not be blank", item="text")
    return text.strip()


def metadata(value: object) -> dict[str, Any]:
    """Custom metadata: a JSON object (None: none), its keys strings, its values JSON, bounded
    (``json_input.json_object``)."""
    return json_object(value, "metadata")


def filters(value: object) -> MetadataFilter:
    """A metadata filter (``models.filters``): None for none."""
    return metadata_filter(value, "filters")


def plan(mode: str, settings: Settings) -> SearchPlan:
    if mode not in _PLANS:
        raise InputError(f"unknown search mode {mode!r}: use hybrid, keyword or vector", item="mode")
    return _PLANS[mode].with_(
        rrf_k=settings.search.rrf_k,
        depth=settings.search.candidates,
        keyword_weight=settings.search.keyword_weight,
    )


def query(text: object) -> str:
    """A search query: a string (blank finds nothing); very long ones are cut, not refused."""
    if not isinstance(text, str):
        raise InputError(f"must be a string, got {type(text).__name__}", item="query")
    return text[:MAX_QUERY_CHARS]


MAX_QUERY_CHARS = 10_000
