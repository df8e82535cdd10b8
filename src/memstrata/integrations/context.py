"""What the adapters share about recall and capture: the context text an agent is given, and
the conversation messages memstrata keeps."""

from __future__ import annotations

from typing import Any

from memstrata.operations import MemoryApi, Who
from memstrata.recall import RecallResult


def context_text(result: RecallResult) -> str:
    """A ``RecallResult`` as one block for a system prompt: the persona and scene navigation,
    then the relevant memories ("" when recall found nothing)."""
    parts = [result.system_context.strip(), result.prepend_context.strip()]
    return "\n\n".join(p for p in parts if p)


async def recall_text(mem: MemoryApi, query: str, who: Who, session_key: str | None) -> str:
    """Recall's context for ``query`` ("" for an empty query: nothing to recall for)."""
    if not query.strip():
        return ""
    return context_text(await mem.recall(query, session_key=session_key, **who))


async def capture(mem: MemoryApi, messages: list[dict[str, Any]], who: Who, session_key: str) -> None:
    """Capture conversation messages (role, content, optional id), skipping empty ones."""
    kept = [m for m in messages if str(m.get("content", "")).strip()]
    if kept:
        await mem.capture(kept, session_key=session_key, **who)
