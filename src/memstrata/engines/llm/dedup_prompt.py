"""The L1 dedup prompt and its response model, side by side.

Input: the new drafts (by index), each with its candidate atoms (by id). Only drafts that have
candidates are shown; the others are new by definition. Output:
``{"decisions": [{"index", "action": "store|update|merge|skip", "target_ids", "merged_content"}]}``.
Validation is strict where it protects stored data: a target id must be one of THAT draft's
candidates, or it is rejected.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, field_validator

from memstrata.engines.llm.parsing import as_list, close_cut, field_guide, parse_json, validate_items
from memstrata.models import (
    Atom,
    AtomDraft,
    ChatMessage,
    DedupAction,
    DedupDecision,
    Degradations,
    ResponseSchema,
)

logger = logging.getLogger(__name__)


class DedupChoice(BaseModel):
    """The model's decision about one new memory."""

    index: int = Field(description="the number of the new memory this decision is about")
    action: DedupAction = Field(
        description="'store' when it is new information; 'update' when it corrects or refreshes "
        "an existing memory (which it replaces); 'merge' when it and existing memories are parts "
        "of one fact (all are replaced by merged_content); 'skip' when an existing memory already "
        "says it"
    )
    target_ids: list[str] = Field(
        default_factory=list,
        description="for update, merge and skip: the ids of the existing memories concerned, "
        "chosen only among the candidates listed under this new memory",
    )
    merged_content: str | None = Field(
        None,
        description="for merge only: one standalone statement combining the new memory and the "
        "targets, keeping every name and date, in the language they are written in; else null",
    )

    @field_validator("action", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("target_ids", mode="before")
    @classmethod
    def _ids_as_strings(cls, value: Any) -> Any:
        if value is None:
            return []
        values = [value] if isinstance(value, str | int) else value
        if not isinstance(values, list):
            return value
        return [str(v).strip() for v in values if v is not None]


class DedupReply(BaseModel):
    """The whole reply, as a server with structured outputs is asked to constrain it."""

    decisions: list[DedupChoice] = Field(description="one decision per new memory shown")


# Sent with every dedup call; a server without structured outputs ignores it.
SCHEMA = ResponseSchema("dedup_decisions", DedupReply.model_json_schema())


SYSTEM_PROMPT = f"""\
You keep a memory store free of duplicates. For each new memory below, compare it with the \
existing memories listed under it and decide what to do with it.

Rules:
- Use only the ids listed under that new memory.
- Memories about different people, or different events, are different: store.
- When a new memory adds a detail to an existing one, merge; when it contradicts an older one, \
update; when in doubt, store.

Answer with JSON only, one decision per new memory:
{{"decisions": [{{"index": 0, "action": "store", "target_ids": [], "merged_content": null}}]}}

Decision fields:
{field_guide(DedupChoice)}
"""


def dedup_messages(drafts: Sequence[AtomDraft], candidates: Sequence[Sequence[Atom]]) -> list[ChatMessage]:
    """The chat to send: every draft that has candidates, with those candidates by id."""
    blocks: list[str] = []
    for index, (draft, atoms) in enumerate(zip(drafts, candidates, strict=True)):
        if not atoms:
            continue
        lines = [f"NEW MEMORY {index} [{draft.type.value}]: {draft.content}", "existing memories:"]
        lines.extend(f"- id={atom.id} [{atom.type.value}]: {atom.content}" for atom in atoms)
        blocks.append("\n".join(lines))
    return [ChatMessage("system", SYSTEM_PROMPT), ChatMessage("user", "\n\n".join(blocks))]


def parse_decisions(
    reply: str,
    candidates: Sequence[Sequence[Atom]],
    counts: Degradations | None = None,
    *,
    cut: bool = False,
) -> list[DedupDecision]:
    """Decisions from the model's reply, one at most per draft index, in index order.

    Dropped (logged): invalid items, indexes of drafts that had no candidates, repeated indexes.
    Target ids outside that draft's candidates are rejected (logged); an update or merge left
    without a target becomes store, and so does a skip whose every named target was rejected; a
    merge without ``merged_content`` becomes an update. Raises ``ParseError`` when the reply holds
    no usable JSON. ``cut``: the reply stopped at ``max_tokens``; the decisions it completed are
    kept (``close_cut``) and the drafts it did not reach get none (stored as new).
    """
    data = parse_json((close_cut(reply) or reply) if cut else reply)
    if isinstance(data, dict) and "index" in data:
        data = [data]  # a single decision
    choices = validate_items(
        as_list(data, "decisions", reply=reply), DedupChoice, what="dedup decisions", counts=counts
    )
    decisions: dict[int, DedupDecision] = {}
    for choice in choices:
        shown = 0 <= choice.index < len(candidates) and bool(candidates[choice.index])
        if not shown or choice.index in decisions:
            logger.warning("ignored a dedup decision for index %d (unknown or repeated)", choice.index)
            continue
        decisions[choice.index] = _decision(choice, {atom.id for atom in candidates[choice.index]})
    return [decisions[index] for index in sorted(decisions)]


def _decision(choice: DedupChoice, allowed: set[str]) -> DedupDecision:
    targets = tuple(dict.fromkeys(t for t in choice.target_ids if t in allowed))
    rejected = [t for t in choice.target_ids if t not in allowed]
    if rejected:
        logger.warning(
            "dedup decision for draft %d named ids outside its candidates; rejected %s",
            choice.index,
            rejected,
        )
    action = choice.action
    merged = (choice.merged_content or "").strip() or None
    lost_targets = not targets and (action is not DedupAction.SKIP or bool(rejected))
    if action is not DedupAction.STORE and lost_targets:
        logger.warning("dedup %s for draft %d has no valid target; storing it", action.value, choice.index)
        action = DedupAction.STORE
    if action is DedupAction.MERGE and merged is None:
        action = DedupAction.UPDATE
    keeps_targets = action in (DedupAction.UPDATE, DedupAction.MERGE)
    return DedupDecision(
        index=choice.index,
        action=action,
        targets=targets if keeps_targets else (),
        merged_content=merged if action is DedupAction.MERGE else None,
    )
