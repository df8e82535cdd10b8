"""Recall: the context injected before a prompt, assembled from the layers within budgets.

    system_context   <user-persona> persona body </user-persona>
                     <scene-navigation> scene paths, heat, summaries </scene-navigation>
                     <memory-tools-guide> how to search further </memory-tools-guide>
    prepend_context  <relevant-memories>
                     - [type|scene] content (activity time)
                     </relevant-memories>

Everything that comes from memory is escaped, so no stored text can close a block or open a new
one. Pure functions: gathering (with the timeout) happens in the facade.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from memstrata.layers.l3.persona_doc import escape_tags, render_navigation
from memstrata.models import Hit, Layer
from memstrata.ports import SceneEntry

MAX_SEARCH_CALLS_PER_TURN = 3
TOOLS_GUIDE = (
    "Long-term memory tools are available when the context above is not enough:\n"
    "- memory_search(query, limit=5, type?, scene?): memory atoms (facts, events, instructions).\n"
    "- conversation_search(query, limit=5, session_key?): the raw past messages.\n"
    "- read_scene(path): a whole scene document from the navigation above.\n"
    f"Make at most {MAX_SEARCH_CALLS_PER_TURN} search calls per turn; prefer one precise query."
)


@dataclass(frozen=True, slots=True)
class Budgets:
    """Character budgets; a cut text ends with an ellipsis, never mid-tag."""

    max_results: int = 5
    memory_chars: int = 400  # one memory line
    memories_chars: int = 2_000  # all memory lines together
    persona_chars: int = 4_000
    navigation_chars: int = 2_000


@dataclass(frozen=True, slots=True)
class RecallResult:
    """What ``recall`` returns: the two context strings, and how they were made."""

    system_context: str
    prepend_context: str
    hits: tuple[Hit, ...] = ()
    strategy: str = "none"
    degradations: tuple[str, ...] = ()
    timings_ms: Mapping[str, float] = field(default_factory=dict)


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut at a word boundary with an ellipsis."""
    text = " ".join(text.split()) if "\n" not in text else text.strip()
    if len(text) <= limit:
        return text
    head = text[: max(0, limit - 1)]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip() + "…"


def when(hit: Hit) -> str:
    """The activity time of a memory: its ``activity_start`` if known, else when it was said."""
    start = hit.metadata.get("activity_start")
    if isinstance(start, str) and start:
        end = hit.metadata.get("activity_end")
        return start if not isinstance(end, str) or end in ("", start) else f"{start} to {end}"
    ms = hit.metadata.get("message_time", hit.metadata.get("timestamp"))
    if isinstance(ms, int) and ms > 0:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")
    return ""


def memory_line(hit: Hit, limit: int) -> str:
    """``- [type|scene] content (time)``; raw messages are ``[message|speaker]``."""
    if hit.layer == Layer.L1:
        label = f"{hit.metadata.get('type', 'memory')}|{hit.metadata.get('scene', '') or '-'}"
    elif hit.layer == Layer.L2:
        label = f"scene|{hit.id}"
    else:
        label = f"message|{hit.metadata.get('name') or hit.metadata.get('role', '')}"
    t = when(hit)
    suffix = f" ({t})" if t else ""
    prefix = f"- [{escape_tags(label)}] "
    room = max(20, limit - len(prefix) - len(suffix))
    return f"{prefix}{escape_tags(cut(hit.content, room))}{suffix}"


def memories_block(hits: Sequence[Hit], b: Budgets) -> str:
    lines: list[str] = []
    used = 0
    for hit in hits[: b.max_results]:
        line = memory_line(hit, b.memory_chars)
        if used + len(line) > b.memories_chars:
            break
        lines.append(line)
        used += len(line) + 1
    if not lines:
        return ""
    return "<relevant-memories>\n" + "\n".join(lines) + "\n</relevant-memories>"


def system_block(persona_body: str | None, scenes: Sequence[SceneEntry], b: Budgets) -> str:
    parts = []
    if persona_body and persona_body.strip():
        parts.append(f"<user-persona>\n{escape_tags(cut(persona_body, b.persona_chars))}\n</user-persona>")
    if scenes:
        parts.append(
            f"<scene-navigation>\n{cut(render_navigation(scenes), b.navigation_chars)}\n</scene-navigation>"
        )
    parts.append(f"<memory-tools-guide>\n{TOOLS_GUIDE}\n</memory-tools-guide>")
    return "\n\n".join(parts)
