"""Why a hit matched, in the words a person reads beside it: the query words its keyword share
counted, found where that share looked (the hit's text, its date in words and, for a message, its
speaker), so "holds ..." and the share shown never disagree."""

from __future__ import annotations

from memstrata.models import Hit, Layer
from memstrata.retrieval.documents import day_words
from memstrata.retrieval.relevance import matched_terms
from memstrata.retrieval.terms import judged, query_terms


def matched_words(query: str, hit: Hit) -> list[str]:
    """The query's search terms the hit's judged text holds, by stem."""
    meta = hit.metadata
    when = meta.get("timestamp") if hit.layer == Layer.L0 else meta.get("message_time")
    parts = [judged(hit.content)]  # as far as the share reads a record
    if isinstance(when, int):
        parts.append(day_words(when))
    if hit.layer == Layer.L0:
        parts.append(str(meta.get("name") or ("User" if meta.get("role") == "user" else "Assistant")))
    return matched_terms(query_terms(query), "\n".join(parts))
