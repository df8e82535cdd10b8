"""Reading a recall's sources: one worker thread, each part handed over as soon as it is read, so
a part that fails or is late costs that part only."""

from __future__ import annotations

import threading
import time

from memstrata.models import Hit, Layer, SceneEntry, SearchResult
from memstrata.recall import Budgets
from memstrata.recall.gather import Sources, gather

PERSONA = "Maya is a data engineer in Lisbon."
SCENES = [SceneEntry("food.md", "what Maya eats", 5, 0, 0, ("a1",))]
FOUND = SearchResult((Hit(Layer.L1, "a1", 0.9, "Maya is allergic to peanuts.", ("m1",)),), "hybrid")


def _sources(
    persona: object = PERSONA, memories: object = FOUND, threads: list[int] | None = None
) -> Sources:
    def part(value: object) -> object:
        if threads is not None:
            threads.append(threading.get_ident())
        if isinstance(value, BaseException):
            raise value
        return value() if callable(value) else value

    return Sources(
        persona=lambda: part(persona),  # type: ignore[arg-type,return-value]
        scenes=lambda: part(SCENES),  # type: ignore[arg-type,return-value]
        memories=lambda: part(memories),  # type: ignore[arg-type,return-value]
    )


async def test_every_source_is_read_in_one_worker_thread() -> None:
    threads: list[int] = []
    r = await gather(_sources(threads=threads), Budgets(), 1_000, "peanuts")
    assert len(threads) == 3 and len(set(threads)) == 1
    assert threads[0] != threading.get_ident()  # not on the event loop
    assert PERSONA in r.system_context and "scene_blocks/food.md" in r.system_context
    assert "peanuts" in r.prepend_context and r.degradations == ()


async def test_a_search_later_than_the_timeout_still_leaves_the_persona_and_scenes() -> None:
    release = threading.Event()

    def stuck() -> SearchResult:
        release.wait(30)
        return FOUND

    t0 = time.perf_counter()
    try:
        r = await gather(_sources(memories=stuck), Budgets(), 200, "peanuts")
    finally:
        release.set()
    assert time.perf_counter() - t0 < 15  # the 200 ms timeout, not the stuck search (30 s)
    assert r.degradations == ("memories not ready within 200 ms: left out",)
    assert PERSONA in r.system_context and "scene_blocks/food.md" in r.system_context
    assert r.prepend_context == "" and r.strategy == "none"


async def test_a_persona_that_cannot_be_read_costs_the_persona_only() -> None:
    r = await gather(_sources(persona=OSError("persona.md: permission denied")), Budgets(), 1_000, "peanuts")
    assert r.degradations == ("persona failed (OSError: persona.md: permission denied): left out",)
    assert "<user-persona>" not in r.system_context and "scene_blocks/food.md" in r.system_context
    assert "peanuts" in r.prepend_context and r.strategy == "hybrid"
