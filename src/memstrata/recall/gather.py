"""Reading the sources of a recall concurrently, within a timeout, and assembling what is ready."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from memstrata.models import Hit, SceneEntry, SearchResult
from memstrata.recall.assemble import Budgets, memories_block, system_block
from memstrata.recall.excerpt import Excerpt, excerpt_for
from memstrata.recall.select import content_terms
from memstrata.retrieval.terms import language_of

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
    """Where recall reads from: blocking callables, the search in one worker thread and the
    persona and scene index in another, at once.
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
    """Read every source concurrently and assemble what is ready within ``timeout_ms``: the
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

    def files() -> dict[str, Future[Any]]:
        # The persona and the scene index are two small file reads, most often answered by the
        # read cache: one worker thread reads both, beside the search. A thread apiece cost each
        # recall two more hand-offs contending with the search for the GIL (~0.5 ms at the
        # median through the LLM proxy, bench/proxy_overhead.py's method, docs/benchmarks.md).
        return {
            name: _settled(timed(name, fn))
            for name, fn in (("persona", sources.persona), ("scenes", sources.scenes))
        }

    started = time.perf_counter()
    reads = asyncio.ensure_future(asyncio.to_thread(files))
    search = asyncio.ensure_future(asyncio.to_thread(timed("memories", sources.memories)))
    await asyncio.wait((reads, search), timeout=timeout_ms / 1000)
    outcomes: dict[str, Future[Any] | asyncio.Future[Any] | None] = {
        **(reads.result() if reads.done() else {"persona": None, "scenes": None}),
        "memories": search if search.done() else None,
    }
    for late in (reads, search):
        late.cancel()  # a late worker thread finishes on its own; its answer is dropped
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


def _settled(fn: Callable[[], Any]) -> Future[Any]:
    """``fn``'s result or exception, as a finished future."""
    done: Future[Any] = Future()
    try:
        done.set_result(fn())
    except Exception as exc:  # noqa: BLE001 - handed on: gather names it in the degradations
        done.set_exception(exc)
    return done
