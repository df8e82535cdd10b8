"""What search takes and returns: filters per layer, the store's scored primitives, hits."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from memstrata.models.filters import NO_FILTER, MetadataFilter
from memstrata.models.records import AtomType, Layer

Vectors = npt.NDArray[np.float32]

# What every search surface searches when the caller names no layers: atoms and the raw messages
# (a message that made no atom is still found; LoCoMo dev R@10 measured in docs/benchmarks.md).
DEFAULT_LAYERS: tuple[Layer, ...] = (Layer.L1, Layer.L0)


@dataclass(frozen=True, slots=True)
class MessageFilter:
    session_key: str | None = None
    since: int | None = None  # timestamp, ms, inclusive
    until: int | None = None  # timestamp, ms, exclusive
    metadata: MetadataFilter = NO_FILTER  # on the message's custom metadata


@dataclass(frozen=True, slots=True)
class AtomFilter:
    type: AtomType | None = None
    scene: str | None = None  # substring of scene_name
    since: int | None = None
    until: int | None = None
    include_superseded: bool = False
    # Leave out atoms expired at this time (ms): ``expires_at <= at`` and not pinned. Search and
    # recall set it to now; None (listings, the data plane) shows expired atoms until the sweep.
    at: int | None = None
    metadata: MetadataFilter = NO_FILTER  # on the atom's metadata


class Scored(NamedTuple):
    """A search primitive's answer: a record's ``seq`` and its score (higher is better). A named
    tuple, not a frozen dataclass: a search makes some 500 of them, and a tuple is made in 0.3
    against 0.7 us."""

    seq: int
    score: float


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result. ``score`` is its relevance in [0, 1], from the evidence (vector similarity
    and keyword match: see ``retrieval/relevance.py``), comparable across queries of one store.
    ``rank`` is the hit's place in its result list (from 1; 0 when not from a search): lists are in
    the fused order the candidates were chosen by, which measured better than ordering by the
    relevance itself (docs/design.md, "Search"). ``explain`` holds the raw signals and the fused
    rank before the floor and diversification left hits out (``fused_rank``)."""

    layer: Layer
    id: str
    score: float
    content: str
    source_message_ids: tuple[str, ...]
    metadata: dict[str, Any] = field(default_factory=dict)
    rank: int = 0
    explain: dict[str, float | int | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SearchResult(Sequence[Hit]):
    """Ranked hits plus how they were found. Iterates and indexes like a list of hits.

    ``strategy`` is what actually ran (``hybrid``, ``keyword`` or ``vector``); ``degradations``
    says why it differs from what was asked, in words a person can act on.
    """

    hits: tuple[Hit, ...]
    strategy: str
    degradations: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __getitem__(self, index: int) -> Hit:  # type: ignore[override]
        return self.hits[index]


def layer_of(flt: MessageFilter | AtomFilter) -> Layer:
    """The layer a filter applies to: messages are L0, atoms L1."""
    return Layer.L0 if isinstance(flt, MessageFilter) else Layer.L1
