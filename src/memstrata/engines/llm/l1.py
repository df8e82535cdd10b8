"""The LLM engine for L1: extraction and dedup through any ``ChatModel``.

Both ask for JSON (``json_mode=True``), parse it tolerantly and validate it strictly (see
``l1_prompt`` and ``dedup_prompt``). A reply with no usable JSON raises ``ParseError``, an
``EngineError``: the pipeline keeps the window pending, retries later and writes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from memstrata.engines.llm.dedup_prompt import dedup_messages, parse_decisions
from memstrata.engines.llm.l1_prompt import extraction_messages, parse_extraction
from memstrata.errors import EngineError
from memstrata.models import Atom, AtomDraft, DedupDecision, ExtractionWindow
from memstrata.ports import ChatModel

logger = logging.getLogger(__name__)


class LLMExtractor:
    """``Extractor``: one model call per window; returns the drafts the reply holds.

    Raises ``ModelError`` when the model fails and ``ParseError`` when its reply is unusable.
    """

    def __init__(self, model: ChatModel) -> None:
        self.model = model

    async def extract(self, window: ExtractionWindow) -> list[AtomDraft]:
        """Drafts for the window's new messages (an empty window makes no call)."""
        if not window.new:
            return []
        reply = await self.model.complete(extraction_messages(window), json_mode=True)
        drafts = parse_extraction(reply.content, window)
        logger.debug(
            "extracted %d drafts from %d messages (%d+%d tokens)",
            len(drafts),
            len(window.new),
            reply.prompt_tokens,
            reply.completion_tokens,
        )
        return drafts


class LLMDeduplicator:
    """``Deduplicator``: one model call for all drafts that have candidates, none otherwise.

    Drafts without candidates get no decision (the port reads a missing index as STORE).
    Raises ``ModelError`` when the model fails and ``ParseError`` when its reply is unusable.
    """

    def __init__(self, model: ChatModel) -> None:
        self.model = model

    async def decide(
        self, drafts: Sequence[AtomDraft], candidates: Sequence[Sequence[Atom]]
    ) -> list[DedupDecision]:
        """Decisions for the drafts that have candidates; ``candidates[i]`` belongs to ``drafts[i]``."""
        if len(drafts) != len(candidates):
            raise EngineError(f"dedup got {len(drafts)} drafts but {len(candidates)} candidate lists")
        if not any(candidates):
            return []
        reply = await self.model.complete(dedup_messages(drafts, candidates), json_mode=True)
        return parse_decisions(reply.content, candidates)
