"""The quality gate: is a window worth an engine call at all?"""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.models import Message
from memstrata.retrieval.terms import query_terms

MIN_CONTENT_TERMS = 2


def worth_extracting(m: Message) -> bool:
    """A message with at least two content words (or any CJK word) may hold a memory."""
    return len(query_terms(m.content)) >= MIN_CONTENT_TERMS


def passes(window: Sequence[Message]) -> bool:
    return any(worth_extracting(m) for m in window)
