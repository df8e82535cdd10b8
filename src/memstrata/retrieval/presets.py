"""Named retrieval plans: pick one instead of combining flags."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """How to search: which primitives, how deep each list goes, and the RRF constant."""

    mode: Literal["hybrid", "keyword", "vector"]
    depth: int = 100  # candidates per primitive list before fusion
    rrf_k: float = 60.0
    keyword_weight: float = 1.0  # a keyword list's RRF weight beside a vector list's 1
    # Scale it per query by the list's agreement with the query's meaning (retrieval/fusion.py);
    # False: ``keyword_weight`` as it is (recall's plan: see ``RecallSettings.rrf_k``).
    agreement: bool = True
    # Fuse findings, not records: a record's place in each list is the best of its finding's (a
    # message and the atoms citing it; ``fusion.finding_rrf``). False: each record on its own.
    # Findings were chosen where vector lists are searched; keyword lists alone (keyword
    # mode, no embedder) keep each record's own places (zh_check's keyword top 3: 20, not 19 of 24).
    findings: bool = True
    # Beside the atoms' lists, the tenant's instructions by meaning (``Searcher._instructions``),
    # weighed by how close its first is to the query (``fusion.INSTRUCTION_TOP``). Hybrid only.
    instructions: bool = True
    # Leave out a hit whose source messages are all covered by better hits, so an
    # atom and the message it came from do not take two places of a short result list.
    diversify: bool = True

    def with_(self, **changes: object) -> SearchPlan:
        return replace(self, **changes)  # type: ignore[arg-type]


# Keyword and vector lists fused by RRF; falls back to keyword when there is no embedder.
HYBRID = SearchPlan("hybrid")
# BM25 only: no embedding call, the fastest plan.
KEYWORD_ONLY = SearchPlan("keyword")
# Cosine similarity only: for paraphrase-heavy queries.
VECTOR_ONLY = SearchPlan("vector")
