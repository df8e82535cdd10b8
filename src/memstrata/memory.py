"""The async facade: every interface (library, CLI, gateway, MCP) calls these methods.

``AsyncMemory`` is built from ports by the composition root (``memstrata.api.AsyncMemory.open``);
it holds no backend-specific code. Store calls are short and run in worker threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memstrata import arguments as args
from memstrata.arguments import MessageInput
from memstrata.errors import ConfigError, EmbeddingError, PathError
from memstrata.importers.tdai import TdaiImportReport, read_tdai
from memstrata.layers.capture import CaptureResult, prepare
from memstrata.layers.l2 import names as scene_names
from memstrata.layers.l3 import persona_doc
from memstrata.models import DEFAULT, Atom, Layer, Message, NewMessage, Role, SearchResult, Tenant
from memstrata.pipeline.coordinator import Pipeline, RunAllReport
from memstrata.pipeline.runner import L1Runner
from memstrata.pipeline.scheduler import Scheduler, SessionStatus
from memstrata.pipeline.tdai_import import TdaiImport
from memstrata.pipeline.tenants import TenantScheduler, TenantStatus
from memstrata.ports import (
    AtomFilter,
    Clock,
    Deduplicator,
    Embedder,
    Extractor,
    MessageFilter,
    Persona,
    Scene,
    SceneEntry,
    Store,
    UpperLayers,
)
from memstrata.recall import Budgets, RecallResult, Sources, gather, heated, warm_scenes
from memstrata.retrieval.documents import message_vector_text
from memstrata.retrieval.reindex import reindex
from memstrata.retrieval.search import Searcher, SearchRequest
from memstrata.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Status:
    sessions: tuple[SessionStatus, ...]
    messages: int
    atoms: int
    embedder: str | None
    vectors_note: str | None
    tenants: tuple[TenantStatus, ...] = ()


class AsyncMemory:
    """Long-term memory for one data directory (or database). Use ``await AsyncMemory.open(...)``.

    Without ``upper`` (scene and persona stores and writers) the pipeline stops at L1.
    """

    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Clock,
        embedder: Embedder | None,
        extractor: Extractor,
        deduplicator: Deduplicator,
        *,
        upper: UpperLayers | None = None,
    ) -> None:
        self.settings = settings
        self._store = store
        self._clock = clock
        self._embedder = embedder
        self._upper = upper
        self._searcher = Searcher(store, embedder, self._check_vectors())
        runner = L1Runner(store, extractor, deduplicator, self._vector_embedder, clock, settings.pipeline)
        tenants = None
        if upper is not None:
            tenants = TenantScheduler(store, upper, clock, settings.pipeline, settings.persona)
        on_atoms = tenants.on_l1_atoms if tenants is not None else None
        self._scheduler = Scheduler(store, runner, clock, settings.pipeline, on_atoms)
        self._pipeline = Pipeline(store, self._scheduler, tenants, clock)
        self._pipeline.recover()
        self._background: asyncio.Task[None] | None = None
        self._warming: set[asyncio.Future[list[str]]] = set()

    # --- lifecycle -----------------------------------------------------------------------------

    def start_background(self) -> None:
        """Run the scheduler in a background task of the running loop until ``close``."""
        if self._background is None:
            self._background = asyncio.get_running_loop().create_task(self._pipeline.serve())

    async def close(self, *, flush: bool = True) -> None:
        """Stop the background loop, run L1 on what this process captured (unless ``flush=False``:
        it then waits, durably, for the next process), and close the store."""
        if self._background is not None:
            self._background.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._background
            self._background = None
        if self._warming:
            await asyncio.gather(*self._warming, return_exceptions=True)
        if flush and self._scheduler.touched:
            await self._scheduler.flush_touched()
        await asyncio.to_thread(self._store.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- L0 -------------------------------------------------------------------------------------

    async def capture(
        self,
        messages: Sequence[MessageInput],
        *,
        session_key: str = DEFAULT,
        session_id: str | None = None,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> CaptureResult:
        """Store messages of one session (L0). Returns at once: extraction runs in the pipeline."""
        tenant = Tenant(user_id, agent_id)
        batch = [args.as_message(m, i) for i, m in enumerate(messages)]
        result = await asyncio.to_thread(self._capture, tenant, session_key, session_id or session_key, batch)
        self._pipeline.wake()
        return result

    def _capture(
        self, tenant: Tenant, session_key: str, session_id: str, batch: list[NewMessage]
    ) -> CaptureResult:
        now = self._clock.now_ms()
        previous = self._store.messages.last(tenant, session_key)
        ready, dropped = prepare(
            tenant,
            session_key,
            session_id,
            batch,
            previous,
            now,
            with_previous=self.settings.search.context_previous,
        )
        stored = self._store.messages.append(ready)
        stored_ids = {m.id for m in stored}
        duplicates = tuple(m.id for m, _ in ready if m.id not in stored_ids)
        degradations = self._embed_messages(tenant, stored)
        if stored:
            turns = sum(1 for m in stored if m.role == Role.USER) or 1
            self._scheduler.on_capture(tenant, session_key, turns)
        return CaptureResult(tuple(stored), duplicates, tuple(dropped), degradations)

    def _embed_messages(self, tenant: Tenant, stored: list[Message]) -> tuple[str, ...]:
        embedder = self._vector_embedder()
        if embedder is None or not stored:
            return ()
        try:
            vectors = embedder.embed([message_vector_text(m) for m in stored])
        except EmbeddingError as exc:
            log.warning("message embedding failed; messages are stored, run `memstrata reindex`: %s", exc)
            return (f"embedding failed ({exc.message}): messages stored without vectors",)
        self._store.index.put_vectors(tenant, Layer.L0, [m.seq for m in stored], vectors)
        return ()

    async def messages(
        self,
        *,
        user_id: str | None = DEFAULT,
        agent_id: str = DEFAULT,
        session_key: str | None = None,
        since: int | None = None,
        until: int | None = None,
        limit: int = 100,
        after_seq: int = 0,
    ) -> list[Message]:
        """Stored L0 messages by ascending seq; ``user_id=None`` lists every tenant (admin use)."""
        tenant = None if user_id is None else Tenant(user_id, agent_id)
        flt = MessageFilter(session_key, since, until)
        return await asyncio.to_thread(
            self._store.messages.list, tenant, flt, limit=limit, after_seq=after_seq
        )

    async def atoms(
        self,
        *,
        user_id: str | None = DEFAULT,
        agent_id: str = DEFAULT,
        type: str | None = None,
        scene: str | None = None,
        since: int | None = None,
        until: int | None = None,
        include_superseded: bool = False,
        limit: int = 100,
        after_seq: int = 0,
    ) -> list[Atom]:
        """Stored L1 atoms by ascending seq; ``user_id=None`` lists every tenant (admin use)."""
        tenant = None if user_id is None else Tenant(user_id, agent_id)
        flt = AtomFilter(args.atom_type(type), scene, since, until, include_superseded)
        return await asyncio.to_thread(self._store.atoms.list, tenant, flt, limit=limit, after_seq=after_seq)

    # --- L2 / L3 --------------------------------------------------------------------------------

    async def persona(self, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Persona | None:
        """The tenant's persona (body and scene navigation apart), or None before the first one."""
        if self._upper is None:
            return None
        tenant = Tenant(user_id, agent_id)
        found = await asyncio.to_thread(self._upper.persona.read, tenant)
        if found is None:
            return None
        body, navigation = persona_doc.split(found[0])
        return Persona(tenant, body, navigation, found[1])

    async def scenes(self, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> list[SceneEntry]:
        """The tenant's scene index: one entry per scene file, with the atom ids it consolidates."""
        if self._upper is None:
            return []
        return await asyncio.to_thread(self._upper.scenes.index, Tenant(user_id, agent_id))

    async def read_scene(self, path: str, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Scene:
        """One scene file, parsed: ``path`` is ``scene_blocks/<name>.md`` (as in the navigation) or
        ``<name>.md``. Raises ``PathError`` for any other path or a scene that does not exist."""
        name = scene_names.from_path(path)
        found = (
            await asyncio.to_thread(self._upper.scenes.load, Tenant(user_id, agent_id)) if self._upper else []
        )
        for scene in found:
            if scene.name == name:
                return scene
        raise PathError("no such scene", path=path)

    async def tenants(self) -> list[Tenant]:
        """Every tenant with messages or scenes in this memory."""

        def read() -> list[Tenant]:
            found = self._pipeline.known_tenants()
            found += self._upper.scenes.tenants() if self._upper is not None else []
            return sorted(set(found), key=lambda t: (t.user_id, t.agent_id))

        return await asyncio.to_thread(read)

    # --- search ---------------------------------------------------------------------------------

    async def search(
        self,
        query: str,
        *,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
        limit: int = 10,
        layers: Iterable[str | Layer] = ("L1",),
        mode: str = "hybrid",
        type: str | None = None,
        scene: str | None = None,
        session_key: str | None = None,
        since: int | None = None,
        until: int | None = None,
        include_superseded: bool = False,
    ) -> SearchResult:
        """Search memory atoms (L1) and/or raw messages (L0) of one tenant, fused into one ranking."""
        layer_set = tuple(args.layer(x) for x in layers)
        req = SearchRequest(
            Tenant(user_id, agent_id),
            query,
            layer_set,
            args.limit(limit),
            MessageFilter(session_key, since, until),
            AtomFilter(args.atom_type(type), scene, since, until, include_superseded),
            args.plan(mode, self.settings),
        )
        return await asyncio.to_thread(self._searcher.search, req)

    async def search_conversations(
        self,
        query: str,
        *,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
        limit: int = 10,
        session_key: str | None = None,
        mode: str = "hybrid",
        since: int | None = None,
        until: int | None = None,
    ) -> SearchResult:
        """Search raw messages (L0) only."""
        return await self.search(
            query,
            user_id=user_id,
            agent_id=agent_id,
            limit=limit,
            layers=("L0",),
            mode=mode,
            session_key=session_key,
            since=since,
            until=until,
        )

    # --- recall ---------------------------------------------------------------------------------

    async def recall(
        self,
        query: str,
        *,
        session_key: str | None = None,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> RecallResult:
        """Context for the next prompt: ``system_context`` (persona, scene navigation, tools guide)
        and ``prepend_context`` (relevant memories). Never raises into the agent's turn: within
        ``recall.timeout_ms`` it returns what is ready and says what was left out and why."""
        tenant, r = Tenant(user_id, agent_id), self.settings.recall
        budgets = Budgets(**r.model_dump(exclude={"timeout_ms"}))
        request = SearchRequest(
            tenant, query, (Layer.L1, Layer.L0), r.candidates, plan=args.plan("hybrid", self.settings)
        )
        upper = self._upper

        def persona() -> str | None:
            found = upper.persona.read(tenant) if upper is not None else None
            return persona_doc.strip_navigation(found[0]) if found else None

        sources = Sources(
            persona=persona,
            scenes=lambda: upper.scenes.index(tenant) if upper is not None else [],
            memories=lambda: self._searcher.search(request),
            scene_body=lambda name: next(
                (s.body for s in (upper.scenes.load(tenant) if upper else []) if s.name == name), None
            ),
        )
        result = await gather(sources, budgets, r.timeout_ms, query)
        atom_ids = heated(result.hits)
        if upper is not None and atom_ids:
            warming = asyncio.ensure_future(asyncio.to_thread(warm_scenes, upper.scenes, tenant, atom_ids))
            self._warming.add(warming)
            warming.add_done_callback(self._warmed)
        return result

    def _warmed(self, task: asyncio.Future[list[str]]) -> None:
        self._warming.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.warning("raising scene heat after recall failed: %s", exc)

    # --- pipeline -------------------------------------------------------------------------------

    async def run_pending(self) -> int:
        """Run every pipeline stage that is due now (L1, then L2 and L3), until nothing is.
        Returns runs attempted."""
        return await self._pipeline.run_due()

    async def run_all(self) -> RunAllReport:
        """Process everything now, due or not: L1 on every session backlog, then L2 and L3 on every
        tenant with new atoms (import, CLI). Failures are recorded in ``status`` and retried later."""
        return await self._pipeline.run_all()

    async def request_persona(
        self, reason: str = "explicit request", *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> None:
        """Ask for the tenant's persona to be rewritten (runs with the next ``run_pending``)."""
        if self._pipeline.tenants is None:
            raise ConfigError("this memory has no L2/L3 pipeline")
        await asyncio.to_thread(self._pipeline.tenants.request_persona, Tenant(user_id, agent_id), reason)

    async def end_session(
        self, session_key: str = DEFAULT, *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> None:
        """The session is over: extract what is pending for it now."""
        await self._scheduler.flush([(Tenant(user_id, agent_id), session_key)])

    async def status(self) -> Status:
        def read() -> Status:
            sessions = tuple(self._scheduler.status())
            tenants = self._pipeline.tenants
            return Status(
                sessions,
                self._store.messages.count(None),
                self._store.atoms.count(None),
                self._embedder.name if self._embedder else None,
                self._searcher.vectors_note,
                tuple(tenants.status()) if tenants is not None else (),
            )

        return await asyncio.to_thread(read)

    async def reindex(self) -> int:
        """Re-embed every record without a vector (all of them after an embedder change)."""
        if self._embedder is None:
            raise ConfigError(
                "reindex needs an embedder: set embedding.provider (e.g. MEMSTRATA_EMBEDDING__PROVIDER)"
            )
        done = await asyncio.to_thread(reindex, self._store, self._embedder)
        self._searcher.vectors_note = None
        return done

    # --- internals ------------------------------------------------------------------------------

    def _check_vectors(self) -> str | None:
        if self._embedder is None:
            return None
        stored = self._store.index.embedding_model()
        if stored is None:
            self._store.index.reset_vectors(self._embedder.name)
            return None
        if stored != self._embedder.name:
            note = (
                f"stored vectors were made by {stored} but the embedder is {self._embedder.name}: "
                "keyword search only until `memstrata reindex`"
            )
            log.warning(note)
            return note
        return None

    def _vector_embedder(self) -> Embedder | None:
        """The embedder, when new vectors may be written (not while stale ones await reindex)."""
        return None if self._searcher.vectors_note else self._embedder

    # --- import ---------------------------------------------------------------------------------

    async def import_tdai(self, path: str | Path) -> TdaiImportReport:
        """Import a TencentDB-Agent-Memory data directory: messages, atoms (ids, types, priorities,
        scene names and source message ids kept), scene files and personas of every tenant.

        Idempotent: what the memory already has (message and atom ids, scene file names, a persona)
        is kept as it is. Imported messages are not extracted again, and atoms the imported scenes
        consolidate are not consolidated again. Unreadable lines are skipped and reported. Raises
        ``ValidationError`` when ``path`` is not such a directory.
        """
        data = await asyncio.to_thread(read_tdai, Path(path))
        tenants = self._pipeline.tenants
        on_atoms = tenants.on_l1_atoms if tenants is not None else None
        writer = TdaiImport(self._store, self._upper, self._capture, self._vector_embedder(), on_atoms)
        report = await asyncio.to_thread(writer.run, data)
        self._pipeline.wake()
        return report
