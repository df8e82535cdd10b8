"""Fakes and a factory for L2/L3 pipeline tests: recording writers with failures on demand."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from memstrata.clock import FakeClock
from memstrata.errors import EngineError
from memstrata.layers.l2.names import normalise
from memstrata.layers.l2.scene_file import render_scene
from memstrata.memory import AsyncMemory
from memstrata.models import Atom, ConsolidationResult, Scene
from memstrata.ports import ConsolidationRequest, PersonaRequest, UpperLayers
from memstrata.stores.files import FilePersonaStore, FileSceneStore
from tests.support.engines import NoDedup, RecordingExtractor
from tests.support.parts import memory_from


class RecordingSceneWriter:
    """Writes each atom as a line of the scene ``name_of(atom)`` names (default: its L1
    ``scene_name``); records requests.

    ``fail_on_call(n)`` makes the n-th call (1-based, counted from now) write its files and THEN
    raise ``EngineError``: a failure in the middle of a run, after files changed.
    ``requests_persona`` is returned as persona requests by every call.
    """

    def __init__(self, name_of: Callable[[Atom], str] | None = None) -> None:
        self.requests: list[ConsolidationRequest] = []
        self.requests_persona: tuple[str, ...] = ()
        self.name_of = name_of or (lambda a: a.scene_name or "general")
        self._fail_at: int | None = None

    def fail_on_call(self, n: int) -> None:
        self._fail_at = len(self.requests) + n

    async def consolidate(self, request: ConsolidationRequest) -> ConsolidationResult:
        self.requests.append(request)
        by_name = {s.name: s for s in request.scenes}
        placed: dict[str, str] = {}
        for a in request.atoms:
            name = normalise(self.name_of(a))
            old = by_name.get(name)
            body = f"{old.body}\n- {a.content}" if old else f"# {name}\n\n- {a.content}"
            by_name[name] = Scene(name, f"about {name}", 0, request.now, request.now, body)
            request.folder.write(name, render_scene(by_name[name]))
            placed[a.id] = name
        if self._fail_at is not None and len(self.requests) >= self._fail_at:
            self._fail_at = None
            raise EngineError("scripted scene writer failure")
        return ConsolidationResult(placed=placed, persona_requests=self.requests_persona)


class RecordingPersonaWriter:
    """Returns ``Persona #<call number>`` bodies; records requests; fails on demand.

    ``during`` (if set) is awaited inside each write: a test triggers L3 again from there.
    """

    def __init__(self) -> None:
        self.requests: list[PersonaRequest] = []
        self.during: Callable[[], Awaitable[None]] | None = None
        self.running = 0
        self.max_running = 0
        self._failures = 0

    def fail_next(self, n: int = 1) -> None:
        self._failures = n

    async def write(self, request: PersonaRequest) -> str:
        self.requests.append(request)
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            if self.during is not None:
                await self.during()
            if self._failures:
                self._failures -= 1
                request.folder.write("persona.md", "half-written persona")  # what a crashing writer leaves
                raise EngineError("scripted persona writer failure")
            return f"# Persona #{len(self.requests)}\n\nAbout the user."
        finally:
            self.running -= 1


def upper_memory(
    home: Path,
    clock: FakeClock,
    extractor: RecordingExtractor,
    scenes: RecordingSceneWriter,
    persona: RecordingPersonaWriter,
) -> AsyncMemory:
    """An AsyncMemory on real SQLite and profile folders with recording engines at every layer."""
    root = home / "profiles"
    upper = UpperLayers(FileSceneStore(root), FilePersonaStore(root), scenes, persona)
    return memory_from(home, clock, extractor, NoDedup(), upper)
