"""The LLM engine for L1: extraction and dedup through any ``ChatModel``.

Both ask for JSON with their response model's schema (a server with structured outputs enforces
it), parse it tolerantly and validate it strictly, item by item (see ``l1_prompt`` and
``dedup_prompt``). A reply with no usable JSON raises ``ParseError``, an ``EngineError``: the
pipeline keeps the window pending, retries later and writes nothing.

Extraction gets by with less where a real server makes it (``shrink``): a prompt too long for the
model's context is sent again with less background, then the window is split; a reply cut at
``max_tokens`` is asked again with twice the tokens, then the window is split, unless it repeats
itself (a loop: what it completed is kept). Each of these is counted in ``degradations`` (shown
by ``status``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from memstrata.engines.llm.dedup_prompt import SCHEMA as DEDUP_SCHEMA
from memstrata.engines.llm.dedup_prompt import dedup_messages, parse_decisions
from memstrata.engines.llm.l1_prompt import SCHEMA, extraction_messages, parse_extraction
from memstrata.engines.llm.shrink import Budget, fit_window
from memstrata.errors import EngineError
from memstrata.models import Atom, AtomDraft, ChatReply, DedupDecision, Degradations, ExtractionWindow
from memstrata.ports import ChatModel

logger = logging.getLogger(__name__)


class LLMExtractor:
    """``Extractor``: one model call per window (more when it must shrink); returns the drafts.

    ``max_tokens`` is the first reply budget (None: the model's own), doubled for a truncated
    reply up to ``max_tokens_cap``. Raises ``ModelError`` when the model fails (also when even one
    message with no background does not fit) and ``ParseError`` when its reply is unusable.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        degradations: Degradations | None = None,
        max_tokens: int | None = None,
        max_tokens_cap: int = 8192,
    ) -> None:
        self.model = model
        self.degradations = degradations if degradations is not None else Degradations()
        self.max_tokens = max_tokens
        self.max_tokens_cap = max_tokens_cap

    async def extract(self, window: ExtractionWindow) -> list[AtomDraft]:
        """Drafts for the window's new messages (an empty window makes no call)."""
        if not window.new:
            return []
        budget = Budget(self.max_tokens, self.max_tokens_cap)
        return await fit_window(window, self._ask, self._parse, self.degradations, budget)

    async def _ask(self, window: ExtractionWindow, max_tokens: int | None) -> ChatReply:
        reply = await self.model.complete(
            extraction_messages(window), json_mode=True, schema=SCHEMA, max_tokens=max_tokens
        )
        logger.debug(
            "extraction reply for %d messages: %d+%d tokens, finish %s",
            len(window.new),
            reply.prompt_tokens,
            reply.completion_tokens,
            reply.finish_reason,
        )
        return reply

    @staticmethod
    def _parse(reply: ChatReply, window: ExtractionWindow, counts: Degradations) -> list[AtomDraft]:
        return parse_extraction(reply.content, window, counts, cut=reply.finish_reason == "length")


class LLMDeduplicator:
    """``Deduplicator``: one model call for all drafts that have candidates, none otherwise.

    Drafts without candidates get no decision (the port reads a missing index as STORE), and so
    do those a reply cut at ``max_tokens`` did not reach (counted in ``truncated_replies``).
    Raises ``ModelError`` when the model fails and ``ParseError`` when its reply is unusable.
    """

    def __init__(self, model: ChatModel, *, degradations: Degradations | None = None) -> None:
        self.model = model
        self.degradations = degradations if degradations is not None else Degradations()

    async def decide(
        self, drafts: Sequence[AtomDraft], candidates: Sequence[Sequence[Atom]]
    ) -> list[DedupDecision]:
        """Decisions for the drafts that have candidates; ``candidates[i]`` belongs to ``drafts[i]``."""
        if len(drafts) != len(candidates):
            raise EngineError(f"dedup got {len(drafts)} drafts but {len(candidates)} candidate lists")
        if not any(candidates):
            return []
        reply = await self.model.complete(
            dedup_messages(drafts, candidates), json_mode=True, schema=DEDUP_SCHEMA
        )
        cut = reply.finish_reason == "length"
        if cut:  # not asked again: a draft it did not reach is stored, as one without candidates
            self.degradations.add("truncated_replies")
        return parse_decisions(reply.content, candidates, self.degradations, cut=cut)
