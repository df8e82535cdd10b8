"""Drafts + dedup decisions -> atoms to insert and atoms they supersede.

Atom ids are derived from the window (tenant, session, last seq) and the draft's position, so a
retried window produces the same ids and the store skips what it already has.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memstrata.models import Atom, AtomDraft, DedupAction, DedupDecision, Message, Tenant, custom_keys

log = logging.getLogger(__name__)
_FOLD = re.compile(r"[\W_]+", re.UNICODE)


@dataclass(slots=True)
class Plan:
    """What one window commits."""

    new: list[Atom] = field(default_factory=list)
    superseded: dict[str, str] = field(default_factory=dict)


def fold(text: str) -> str:
    return _FOLD.sub(" ", text.lower()).strip()


def unique_drafts(drafts: Sequence[AtomDraft]) -> list[AtomDraft]:
    """Drop drafts whose folded text repeats an earlier draft of the same window."""
    seen: set[str] = set()
    out = []
    for d in drafts:
        key = fold(d.content)
        if key and key not in seen:
            seen.add(key)
            out.append(d)
    return out


def clean_sources(draft: AtomDraft, window: Sequence[Message]) -> tuple[str, ...]:
    """Source ids restricted to the window's messages; the whole window when none remain."""
    ids = {m.id for m in window}
    kept = tuple(i for i in draft.source_message_ids if i in ids)
    if not kept:
        log.warning("draft without valid source ids attributed to the whole window: %r", draft.content[:80])
        return tuple(m.id for m in window)
    return kept


def inherited(window: Sequence[Message], sources: Sequence[str]) -> dict[str, Any]:
    """The custom metadata of an atom's source messages in the window (a later message's value
    wins a shared key), for the atom to carry: a filter on a message's keys finds the memories
    made from it. Keys the engine owns (``ENGINE_KEYS``: ``message_time``, ``speaker``, ...)
    are not inherited; the draft's own metadata is laid over the rest."""
    wanted = set(sources)
    out: dict[str, Any] = {}
    for m in window:
        if m.id in wanted:
            out.update(custom_keys(m.metadata))
    return out


def atom_id(tenant: Tenant, session_key: str, window_end: int, index: int, content: str) -> str:
    raw = f"{tenant}|{session_key}|{window_end}|{index}|{content}"
    return hashlib.blake2b(raw.encode("utf-8"), digest_size=12).hexdigest()


def plan_window(
    tenant: Tenant,
    session_key: str,
    window: Sequence[Message],
    drafts: Sequence[AtomDraft],
    decisions: Sequence[DedupDecision],
    candidates: Sequence[Sequence[Atom]],
    now: int,
) -> Plan:
    """Apply decisions (a draft without one is stored). Targets outside the draft's candidates are
    refused here too, whatever the engine said. A pinned atom is never superseded by the
    pipeline: an update or merge naming one stores the draft as a new atom instead."""
    by_index = {d.index: d for d in decisions}
    times = {m.id: m.timestamp for m in window}
    plan = Plan()
    for i, draft in enumerate(drafts):
        decision = by_index.get(i, DedupDecision(i, DedupAction.STORE))
        if decision.action == DedupAction.SKIP:
            continue
        allowed = {a.id: a for a in candidates[i]} if i < len(candidates) else {}
        targets = [allowed[t] for t in decision.targets if t in allowed]
        if any(t.pinned for t in targets):
            decision, targets = DedupDecision(i, DedupAction.STORE), []
        content = draft.content
        if decision.action == DedupAction.MERGE and decision.merged_content and targets:
            content = decision.merged_content
        sources = clean_sources(draft, window)
        if decision.action in (DedupAction.UPDATE, DedupAction.MERGE):
            sources = tuple(dict.fromkeys([*sources, *(s for t in targets for s in t.source_message_ids)]))
        new_id = atom_id(tenant, session_key, window[-1].seq, i, content)
        metadata = {
            **inherited(window, sources),
            **draft.metadata,
            "message_time": max(times.get(s, 0) for s in sources) or now,
        }
        plan.new.append(
            Atom(
                id=new_id,
                tenant=tenant,
                type=draft.type,
                content=content,
                priority=draft.priority,
                scene_name=draft.scene_name,
                source_message_ids=sources,
                metadata=metadata,
                session_key=session_key,
                created_at=now,
                updated_at=now,
                version=1 + max((t.version for t in targets), default=0),
            )
        )
        for t in targets:
            plan.superseded[t.id] = new_id
    return plan
