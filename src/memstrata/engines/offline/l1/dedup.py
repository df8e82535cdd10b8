"""Offline deduplication: normalised text equality and token-set similarity.

A draft equal to a candidate (after folding case, punctuation and whitespace) is skipped. A draft
very similar to a candidate (token-set Jaccard >= ``threshold``, or one token set containing the
other) updates that candidate when the draft is more complete or more recent, else is skipped.
Two dated events with different dates are different facts and are both kept. Anything else is
stored. Targets are only ever ids from that draft's own candidates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memstrata.models import Atom, AtomDraft, DedupAction, DedupDecision

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
MIN_CONTAINED_TOKENS = 4  # containment of tiny texts ("Sam likes tea") says little


def normalise(text: str) -> str:
    """Lowercase, punctuation and whitespace folded to single spaces."""
    return _NON_WORD.sub(" ", text.lower()).strip()


def tokens(text: str) -> frozenset[str]:
    """The distinct normalised words of ``text``."""
    return frozenset(normalise(text).split())


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Token-set Jaccard similarity (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True, slots=True)
class _Text:
    """A text prepared for comparison."""

    norm: str
    toks: frozenset[str]
    metadata: Mapping[str, Any]


def _span(metadata: Mapping[str, Any]) -> tuple[str, str] | None:
    start, end = metadata.get("activity_start"), metadata.get("activity_end")
    if isinstance(start, str) and start:
        return start, end if isinstance(end, str) and end else start
    return None


def _mentioned(metadata: Mapping[str, Any]) -> str:
    value = metadata.get("mentioned_at")
    return value if isinstance(value, str) else ""


def _compare(draft: _Text, cand: _Text, threshold: float) -> DedupAction:
    """What ``draft`` should do about one candidate: SKIP, UPDATE, or STORE (unrelated)."""
    if draft.norm == cand.norm:
        return DedupAction.SKIP
    dspan, cspan = _span(draft.metadata), _span(cand.metadata)
    if dspan and cspan and dspan != cspan:
        return DedupAction.STORE  # the same kind of event on another day is another event
    small = min(len(draft.toks), len(cand.toks))
    contained = small >= MIN_CONTAINED_TOKENS and (draft.toks <= cand.toks or cand.toks <= draft.toks)
    if not contained and jaccard(draft.toks, cand.toks) < threshold:
        return DedupAction.STORE
    if draft.toks <= cand.toks:
        return DedupAction.SKIP  # the candidate already says all of it, however recent the draft
    newer = _mentioned(draft.metadata) > _mentioned(cand.metadata)
    richer = len(draft.toks) > len(cand.toks)
    return DedupAction.UPDATE if newer or richer else DedupAction.SKIP


def _decide_one(
    index: int, draft: AtomDraft, candidates: Sequence[Atom], seen: Sequence[_Text], threshold: float
) -> DedupDecision:
    """The decision for one draft against its candidates and the drafts before it in the batch."""
    mine = _Text(normalise(draft.content), tokens(draft.content), draft.metadata)
    if any(_compare(mine, other, threshold) is not DedupAction.STORE for other in seen):
        return DedupDecision(index, DedupAction.SKIP)  # an earlier draft of this batch says it
    best: tuple[float, DedupAction, str] | None = None
    for cand in candidates:
        theirs = _Text(normalise(cand.content), tokens(cand.content), cand.metadata)
        action = _compare(mine, theirs, threshold)
        if action is DedupAction.STORE:
            continue
        if action is DedupAction.SKIP:
            return DedupDecision(index, DedupAction.SKIP)
        score = jaccard(mine.toks, theirs.toks)
        if best is None or score > best[0]:
            best = (score, action, cand.id)
    if best is not None:
        return DedupDecision(index, DedupAction.UPDATE, (best[2],))
    return DedupDecision(index, DedupAction.STORE)


def decide(
    drafts: Sequence[AtomDraft], candidates: Sequence[Sequence[Atom]], *, threshold: float = 0.8
) -> list[DedupDecision]:
    """One decision per draft, in order. ``candidates[i]`` are the atoms draft ``i`` may target."""
    out: list[DedupDecision] = []
    seen: list[_Text] = []
    for i, draft in enumerate(drafts):
        cands = candidates[i] if i < len(candidates) else ()
        decision = _decide_one(i, draft, cands, seen, threshold)
        out.append(decision)
        if decision.action is not DedupAction.SKIP:
            seen.append(_Text(normalise(draft.content), tokens(draft.content), draft.metadata))
    return out


class OfflineDeduplicator:
    """The ``Deduplicator`` port without a model: see the module docstring for the rules."""

    def __init__(self, threshold: float = 0.8) -> None:
        self.threshold = threshold

    async def decide(
        self, drafts: Sequence[AtomDraft], candidates: Sequence[Sequence[Atom]]
    ) -> list[DedupDecision]:
        """Decisions for every draft (STORE included, so the answer is complete)."""
        return decide(drafts, candidates, threshold=self.threshold)
