"""What one search asks for: the tenant, the query, the layers and filters, the plan and the floors."""

from __future__ import annotations

from dataclasses import dataclass, field

from memstrata.models import AtomFilter, Layer, MessageFilter, Tenant
from memstrata.retrieval.presets import HYBRID, SearchPlan


@dataclass(frozen=True, slots=True)
class SearchRequest:
    tenant: Tenant
    query: str
    layers: tuple[Layer, ...] = (Layer.L1,)
    limit: int = 10
    messages: MessageFilter = field(default_factory=MessageFilter)
    atoms: AtomFilter = field(default_factory=AtomFilter)
    plan: SearchPlan = HYBRID
    min_score: float = 0.0  # hits whose relevance is below this are left out
    query_floor: float = 0.0  # when no hit's relevance reaches this, the query finds nothing
    # A standing atom (persona, instruction) whose cosine with a request of the user's own reaches
    # this is a finding, whatever its relevance (``standing_bar``); None: no such finding.
    standing_floor: float | None = None
