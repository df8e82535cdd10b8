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

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from memstrata.layers.l3.persona_doc import escape_tags, render_navigation
from memstrata.models import Hit, Layer, SceneEntry, SearchResult, Tenant
from memstrata.ports import SceneStore

log = logging.getLogger(__name__)

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


@dataclass(frozen=True, slots=True)
class Sources:
    """Where recall reads from: blocking callables, each run in a worker thread, all at once."""

    persona: Callable[[], str | None]
    scenes: Callable[[], list[SceneEntry]]
    memories: Callable[[], SearchResult]


async def gather(sources: Sources, budgets: Budgets, timeout_ms: int) -> RecallResult:
    """Read every source concurrently and assemble what is ready within ``timeout_ms``.

    Never raises: a source that fails or is late is left out and named in ``degradations``.
    """
    timings: dict[str, float] = {}

    async def timed(name: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        try:
            return await asyncio.to_thread(fn)
        finally:
            timings[name] = round((time.perf_counter() - t0) * 1000, 2)

    started = time.perf_counter()
    parts = {"persona": sources.persona, "scenes": sources.scenes, "memories": sources.memories}
    tasks = {name: asyncio.ensure_future(timed(name, fn)) for name, fn in parts.items()}
    await asyncio.wait(tasks.values(), timeout=timeout_ms / 1000)
    got: dict[str, Any] = {}
    notes: list[str] = []
    for name, task in tasks.items():
        if not task.done():
            task.cancel()  # the worker thread finishes on its own; its answer is dropped
            notes.append(f"{name} not ready within {timeout_ms} ms: left out")
        elif (exc := task.exception()) is not None:
            log.warning("recall: %s failed: %s", name, exc)
            notes.append(f"{name} failed ({type(exc).__name__}: {exc}): left out")
        else:
            got[name] = task.result()
    found: SearchResult | None = got.get("memories")
    hits = found.hits if found is not None else ()
    if found is not None:
        notes.extend(found.degradations)
    timings["total"] = round((time.perf_counter() - started) * 1000, 2)
    return RecallResult(
        system_context=system_block(got.get("persona"), got.get("scenes") or [], budgets),
        prepend_context=memories_block(hits, budgets),
        hits=hits[: budgets.max_results],
        strategy=found.strategy if found is not None else "none",
        degradations=tuple(notes),
        timings_ms=timings,
    )


def warm_scenes(store: SceneStore, tenant: Tenant, atom_ids: Sequence[str]) -> list[str]:
    """Raise by one the heat of each scene that consolidates one of ``atom_ids`` (a recall hit on
    the scene's content); returns the scene names warmed. Writes only what changes."""
    ids = set(atom_ids)
    entries = store.index(tenant)
    warm = {e.name for e in entries if ids.intersection(e.atom_ids)}
    if not warm:
        return []
    for scene in store.load(tenant):
        if scene.name in warm:
            store.save(tenant, replace(scene, heat=scene.heat + 1))
    store.save_index(tenant, [replace(e, heat=e.heat + 1) if e.name in warm else e for e in entries])
    return sorted(warm)
