"""Reading the sources of a recall concurrently, within a timeout, and assembling what is ready."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from memstrata.lang import language_of
from memstrata.models import Hit, SceneEntry, SearchResult
from memstrata.recall.assemble import Budgets, memories_block, system_block
from memstrata.recall.excerpt import Excerpt, excerpt_for
from memstrata.recall.select import content_terms

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RecallResult:
    """What ``recall`` returns: the two context strings, and how they were made. ``hits`` are the
    memories shown in ``prepend_context``, best first."""

    system_context: str
    prepend_context: str
    hits: tuple[Hit, ...] = ()
    strategy: str = "none"
    degradations: tuple[str, ...] = ()
    timings_ms: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Sources:
    """Where recall reads from: blocking callables, read one after the other in one worker
    thread (the persona, the scene index, then the search).
    ``scene_body`` (a scene's Markdown body by file name, None when it is gone) is read after the
    search, only when the hits point at one scene strongly."""

    persona: Callable[[], str | None]
    scenes: Callable[[], list[SceneEntry]]
    memories: Callable[[], SearchResult]
    scene_body: Callable[[str], str | None] | None = None


def _excerpt_finder(
    query: str, scenes: Sequence[SceneEntry], sources: Sources
) -> Callable[[Sequence[Hit]], Excerpt | None] | None:
    read = sources.scene_body
    if read is None or not scenes:
        return None
    terms = content_terms(query)

    def find(hits: Sequence[Hit]) -> Excerpt | None:
        try:
            return excerpt_for(terms, hits, scenes, read, content_terms)
        except Exception as exc:  # noqa: BLE001 - a scene file that cannot be read costs the excerpt only
            log.warning("recall: scene excerpt left out: %s", exc)
            return None

    return find


async def gather(
    sources: Sources,
    budgets: Budgets,
    timeout_ms: int,
    query: str = "",
    *,
    tools: bool = True,
    memory_chars: int | None = None,
) -> RecallResult:
    """Read every source (in one worker thread) and assemble what is ready within ``timeout_ms``: the
    memories in what ``total_chars`` leaves after the system context, or in ``memory_chars``
    when given (a host that puts them apart from it).

    Never raises: a source that fails or is late is left out and named in ``degradations``.
    """
    timings: dict[str, float] = {}

    def timed(name: str, fn: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            t0 = time.perf_counter()
            try:
                return fn()
            finally:
                timings[name] = round((time.perf_counter() - t0) * 1000, 2)

        return run

    parts: dict[str, Future[Any]] = {name: Future() for name in ("persona", "scenes", "memories")}

    def read() -> None:
        # One worker thread reads every source, the two small file reads (most often answered
        # by the read cache) before the search. A thread apiece contended with the search for
        # the interpreter lock: before_prompt p50 0.24-0.45 ms and p95 0.26-0.58 ms slower
        # in process (docs/benchmarks.md). Each part is handed over as soon as it is read, so a
        # search later than the timeout still leaves the persona and the scenes.
        for name, fn in (
            ("persona", sources.persona),
            ("scenes", sources.scenes),
            ("memories", sources.memories),
        ):
            _settle(parts[name], timed(name, fn))

    started = time.perf_counter()
    worker = asyncio.ensure_future(asyncio.to_thread(read))
    await asyncio.wait({worker}, timeout=timeout_ms / 1000)
    worker.cancel()  # a late worker thread finishes on its own; what it reads later is dropped
    outcomes = {name: part if part.done() else None for name, part in parts.items()}
    got: dict[str, Any] = {}
    notes: list[str] = []
    for name, outcome in outcomes.items():
        if outcome is None:
            notes.append(f"{name} not ready within {timeout_ms} ms: left out")
        elif (exc := outcome.exception()) is not None:
            log.warning("recall: %s failed: %s", name, exc)
            notes.append(f"{name} failed ({type(exc).__name__}: {exc}): left out")
        else:
            got[name] = outcome.result()
    found: SearchResult | None = got.get("memories")
    if found is not None:
        notes.extend(found.degradations)
    scenes: list[SceneEntry] = got.get("scenes") or []
    # The conversation's language: the prompt's, else the persona's (a Chinese user reads Chinese).
    lang = language_of(query or got.get("persona") or "")
    system = system_block(got.get("persona"), scenes, budgets, lang, tools=tools)
    memories = memories_block(
        found.hits if found is not None else (),
        budgets.total_chars - len(system) - 1 if memory_chars is None else memory_chars,
        budgets,
        _excerpt_finder(query, scenes, sources),
        given=got.get("persona") or "",
        lang=lang,
    )
    return RecallResult(
        system_context=system,
        prepend_context=memories.block,
        hits=memories.hits,
        strategy=found.strategy if found is not None else "none",
        degradations=tuple(notes),
        # A copy: a late part's thread still writes its time into ``timings`` when it ends.
        timings_ms={**timings, "total": round((time.perf_counter() - started) * 1000, 2)},
    )


def _settle(part: Future[Any], fn: Callable[[], Any]) -> None:
    """``part`` finished with ``fn``'s result or exception."""
    try:
        part.set_result(fn())
    except Exception as exc:  # noqa: BLE001 - handed on: gather names it in the degradations
        part.set_exception(exc)
