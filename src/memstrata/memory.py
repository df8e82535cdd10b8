"""The facade: every interface (library, CLI, gateway, MCP) calls these methods.

``AsyncMemory`` is the one public surface; ``memstrata.sync.Memory`` runs the same methods for
blocking code. Opening is done by the composition root (``wiring.assemble``), which hands the
facade its parts; the facade holds no backend-specific code. Store calls are short and run in
worker threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from memstrata import arguments as args
from memstrata.errors import ConfigError, NotFoundError, ReadOnlyError
from memstrata.importers.tdai import TdaiImportReport, read_tdai
from memstrata.importers.tdai_writer import TdaiImport
from memstrata.importers.types import ImportReport, ImportSession
from memstrata.layers.l0.recorder import CaptureResult, MessageInput, Recorder, stable_id
from memstrata.layers.l2 import names as scene_names
from memstrata.layers.l3 import persona_doc
from memstrata.models import (
    DEFAULT,
    Atom,
    AtomFilter,
    Layer,
    Message,
    MessageFilter,
    NewMessage,
    Persona,
    Scene,
    SceneEntry,
    SearchResult,
    Status,
    Tenant,
)
from memstrata.pipeline.coordinator import Pipeline, RunAllReport
from memstrata.pipeline.embedding import EmbeddingBacklog, fill_missing
from memstrata.pipeline.l1.runner import L1Runner
from memstrata.pipeline.l1.scheduler import Scheduler
from memstrata.pipeline.upper.scheduler import TenantScheduler
from memstrata.ports import ChatModel, Clock, Embedder
from memstrata.recall import Budgets, RecallResult, Sources, gather, warm_scenes
from memstrata.retrieval.search import Searcher, SearchRequest
from memstrata.settings import Settings, load_settings
from memstrata.wiring import Parts, assemble

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]  # (stage, done, total)
CAPTURE_BATCH = 500


class AsyncMemory:
    """Long-term memory for one data directory (or database). Use ``await AsyncMemory.open(...)``.

    Built from ``Parts`` by ``open``; parts without ``upper`` (scene and persona stores and
    writers) make a memory whose pipeline stops at L1 (tests of L1 rules use that).
    """

    def __init__(self, parts: Parts, settings: Settings) -> None:
        self.settings = settings
        self.read_only = parts.read_only
        self._store = parts.store
        self._clock = parts.clock
        self._vectors = parts.vectors
        self._upper = parts.upper
        self._searcher = Searcher(parts.store, parts.vectors)
        p = settings.pipeline
        runner = L1Runner(parts.store, parts.extractor, parts.deduplicator, parts.vectors, parts.clock, p)
        tenants = None
        if parts.upper is not None:
            tenants = TenantScheduler(parts.store, parts.upper, parts.clock, p, settings.persona)
        self._scheduler = Scheduler(
            parts.store, runner, parts.clock, p, tenants.on_l1_atoms if tenants else None
        )
        backlog = EmbeddingBacklog(parts.store, parts.vectors, parts.clock, p.retry_delay_seconds)
        self._pipeline = Pipeline(parts.store, self._scheduler, tenants, backlog, parts.clock)
        self._recorder = Recorder(
            parts.store,
            parts.clock,
            parts.vectors,
            max_chars=settings.capture.max_message_chars,
            with_previous=settings.search.context_previous,
            on_stored=self._scheduler.on_capture,
        )
        if not self.read_only:
            self._pipeline.recover()
        self._background: asyncio.Task[None] | None = None
        self._warming: set[asyncio.Future[None]] = set()

    # --- lifecycle -----------------------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        path_or_url: str | Path | None = None,
        *,
        background: bool = False,
        read_only: bool = False,
        wait: float = 0.0,
        advertise_url: str | None = None,
        clock: Clock | None = None,
        embedder: Embedder | str | None = "settings",
        chat_model: ChatModel | None = None,
        **settings: Any,
    ) -> AsyncMemory:
        """Open memory in a data directory (default ``~/.memstrata`` or ``$MEMSTRATA_HOME``).

        One process writes a data directory at a time: a second writer gets
        ``DirectoryLockedError`` naming the holder, or waits up to ``wait`` seconds.
        ``read_only=True`` takes no lock, never writes and never runs the pipeline.
        ``settings`` override file and environment (e.g. ``pipeline={"engine": "llm"}``);
        ``background=True`` runs the pipeline until ``close``; ``embedder=None`` turns vectors
        off; a ``chat_model`` selects the LLM engine with that model.
        """
        home = path_or_url if path_or_url and "://" not in str(path_or_url) else None
        s = load_settings(home, **settings)
        parts = await asyncio.to_thread(
            assemble,
            s,
            path_or_url,
            read_only=read_only,
            wait=wait,
            advertise_url=advertise_url,
            clock=clock,
            embedder=embedder,
            chat=chat_model,
        )
        mem = cls(parts, s)
        if background:
            mem.start_background()
        return mem

    def start_background(self) -> None:
        """Run the pipeline in a background task of the running loop until ``close``."""
        self._writable("run the pipeline")
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
        """Store messages of one session (L0). Every message is checked first: one bad item is an
        ``InputError`` naming it, and nothing is stored. Returns at once: extraction runs in the
        pipeline."""
        self._writable("capture")
        tenant = args.tenant(user_id, agent_id)
        key = args.name(session_key, "session_key")
        sid = args.name(session_id, "session_id") if session_id is not None else key
        result = await asyncio.to_thread(self._recorder.record, tenant, key, sid, list(messages))
        self._pipeline.wake()
        return result

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
        tenant = None if user_id is None else args.tenant(user_id, agent_id)
        flt = MessageFilter(session_key, since, until)
        return await asyncio.to_thread(
            self._store.messages.list, tenant, flt, limit=limit, after_seq=after_seq
        )

    # --- L1 -------------------------------------------------------------------------------------

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
        tenant = None if user_id is None else args.tenant(user_id, agent_id)
        flt = AtomFilter(args.atom_type(type), scene, since, until, include_superseded)
        return await asyncio.to_thread(self._store.atoms.list, tenant, flt, limit=limit, after_seq=after_seq)

    # --- L2 / L3 --------------------------------------------------------------------------------

    async def persona(self, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Persona | None:
        """The tenant's persona (body and scene navigation apart), or None before the first one."""
        tenant = args.tenant(user_id, agent_id)
        if self._upper is None:
            return None
        found = await asyncio.to_thread(self._upper.persona.read, tenant)
        if found is None:
            return None
        body, navigation = persona_doc.split(found[0])
        return Persona(tenant, body, navigation, found[1])

    async def scenes(self, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> list[SceneEntry]:
        """The tenant's scene index: one entry per scene file, with the atom ids it consolidates."""
        tenant = args.tenant(user_id, agent_id)
        return await asyncio.to_thread(self._upper.scenes.index, tenant) if self._upper else []

    async def read_scene(self, path: str, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Scene:
        """One scene file, parsed: ``path`` is ``scene_blocks/<name>.md`` (as in the navigation) or
        ``<name>.md``. Raises ``PathError`` for any other path, ``NotFoundError`` for a scene that
        does not exist."""
        name = scene_names.from_path(path)
        tenant = args.tenant(user_id, agent_id)
        found = await asyncio.to_thread(self._upper.scenes.load, tenant) if self._upper else []
        for scene in found:
            if scene.name == name:
                return scene
        raise NotFoundError("scene", path, tenant=str(tenant))

    async def tenants(self) -> list[Tenant]:
        """Every tenant with messages or scenes in this memory."""

        def read() -> list[Tenant]:
            found = self._pipeline.known_tenants()
            found += self._upper.scenes.tenants() if self._upper is not None else []
            return sorted(set(found), key=lambda t: (t.user_id, t.agent_id))

        return await asyncio.to_thread(read)

    # --- search and recall ----------------------------------------------------------------------

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
        req = SearchRequest(
            args.tenant(user_id, agent_id),
            args.query(query),
            tuple(args.layer(x) for x in layers),
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
        tenant, r = args.tenant(user_id, agent_id), self.settings.recall
        budgets = Budgets(
            r.max_results, r.memory_chars, r.memories_chars, r.persona_chars, r.navigation_chars
        )
        request = SearchRequest(
            tenant,
            args.query(query),
            (Layer.L1, Layer.L0),
            r.max_results,
            plan=args.plan("hybrid", self.settings),
        )
        upper = self._upper

        def persona() -> str | None:
            found = upper.persona.read(tenant) if upper is not None else None
            return persona_doc.strip_navigation(found[0]) if found else None

        sources = Sources(
            persona=persona,
            scenes=lambda: upper.scenes.index(tenant) if upper is not None else [],
            memories=lambda: self._searcher.search(request),
        )
        result = await gather(sources, budgets, r.timeout_ms)
        if upper is not None and (
            unreadable := upper.persona.problems(tenant) + upper.scenes.problems(tenant)
        ):
            notes = tuple(f"left out: {p}" for p in unreadable)
            result = dataclasses.replace(result, degradations=result.degradations + notes)
        self._warm([h.id for h in result.hits if h.layer == Layer.L1], tenant)
        return result

    def _warm(self, atom_ids: list[str], tenant: Tenant) -> None:
        """Raise the heat of the recalled atoms' scenes, after the answer, under the tenant's lock
        (the L2 writer takes it too). A read-only memory leaves heat to the writer."""
        upper = self._upper
        if self.read_only or upper is None or not atom_ids:
            return

        async def warm() -> None:
            async with self._pipeline.tenants_hold(tenant):
                await asyncio.to_thread(warm_scenes, upper.scenes, tenant, atom_ids)

        task = asyncio.ensure_future(warm())
        self._warming.add(task)
        task.add_done_callback(self._warmed)

    def _warmed(self, task: asyncio.Future[None]) -> None:
        self._warming.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.warning("raising scene heat after recall failed: %s", exc)

    # --- pipeline -------------------------------------------------------------------------------

    async def run_pending(self) -> int:
        """Run every pipeline stage that is due now (vectors, L1, then L2 and L3), until nothing
        is. Returns runs attempted."""
        self._writable("run the pipeline")
        return await self._pipeline.run_due()

    async def run_all(self) -> RunAllReport:
        """Process everything now, due or not: vectors, L1 on every session backlog, then L2 and L3
        on every tenant with new atoms (import, CLI). Failures are recorded in ``status`` and
        retried later."""
        self._writable("run the pipeline")
        return await self._pipeline.run_all()

    async def request_persona(
        self, reason: str = "explicit request", *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> None:
        """Ask for the tenant's persona to be rewritten (runs with the next ``run_pending``)."""
        self._writable("request a persona")
        tenant = args.tenant(user_id, agent_id)
        await asyncio.to_thread(self._pipeline.request_persona, tenant, reason)

    async def end_session(
        self, session_key: str = DEFAULT, *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> None:
        """The session is over: extract what is pending for it now."""
        self._writable("end a session")
        await self._scheduler.flush([(args.tenant(user_id, agent_id), args.name(session_key, "session_key"))])

    async def status(self) -> Status:
        """The pipeline per session and tenant, counts, the embedder and what is degraded."""
        return await asyncio.to_thread(self._pipeline.status, self._vectors, self.read_only)

    async def repair(self) -> list[str]:
        """Make the store and the profile files whole again: mirrors rewritten from the database
        where they disagree with it, unreadable scene and persona files set aside and restored from
        their newest readable backup. Returns one line per repair (empty: nothing to repair)."""
        self._writable("repair")
        async with self._pipeline.exclusive():
            done = await asyncio.to_thread(self._store.repair)
            tenants = await self.tenants()
            if self._pipeline.tenants is not None:
                done += [str(p) for p in await self._pipeline.tenants.repair_files(tenants)]
        return done

    async def reindex(self) -> int:
        """Re-embed every record without a vector (all of them after an embedder change)."""
        self._writable("reindex")
        embedder = self._vectors.embedder
        if embedder is None:
            raise ConfigError(
                "reindex needs an embedder: set embedding.provider (e.g. MEMSTRATA_EMBEDDING__PROVIDER)"
            )

        def run() -> int:
            if self._store.index.embedding_model() != embedder.name:
                self._store.index.reset_vectors(embedder.name)
            done = sum(
                fill_missing(self._store, embedder, layer, 0, 1 << 62)[0] for layer in (Layer.L0, Layer.L1)
            )
            self._vectors.reindexed()
            self._pipeline.embedding.rescan()
            return done

        async with self._pipeline.exclusive():
            return await asyncio.to_thread(run)

    # --- import ---------------------------------------------------------------------------------

    async def import_sessions(
        self, sessions: Sequence[ImportSession], *, process: bool = True, on_progress: Progress | None = None
    ) -> ImportReport:
        """Capture whole sessions of history (seed files, LoCoMo, the gateway's seed route), then,
        with ``process``, end each session and run the pipeline to L3. Messages without an id get
        one derived from their tenant, session, position, role and text, so importing the same
        history again stores nothing. ``on_progress(stage, done, total)`` follows each stage."""
        self._writable("import")
        total = sum(len(s.messages) for s in sessions)
        report = ImportReport(sessions=len(sessions))
        done = 0
        for s in sessions:
            messages = [_with_id(s, i, m) for i, m in enumerate(s.messages)]
            for i in range(0, len(messages), CAPTURE_BATCH):
                r = await self.capture(
                    messages[i : i + CAPTURE_BATCH],
                    session_key=s.session_key,
                    session_id=s.session_id,
                    user_id=s.tenant.user_id,
                    agent_id=s.tenant.agent_id,
                )
                report.add(r)
                done += len(messages[i : i + CAPTURE_BATCH])
                if on_progress:
                    on_progress("L0 capture", done, total)
        if process:
            for n, s in enumerate(sessions, start=1):
                await self.end_session(s.session_key, user_id=s.tenant.user_id, agent_id=s.tenant.agent_id)
                if on_progress:
                    on_progress("L1 extraction", n, len(sessions))
            await self.run_all()  # then L2 scenes and L3 personas of every tenant with new atoms
        return report

    async def import_tdai(self, path: str | Path) -> TdaiImportReport:
        """Import a TencentDB-Agent-Memory data directory: messages, atoms (ids, types, priorities,
        scene names and source message ids kept), scene files and personas of every tenant.

        Idempotent: what the memory already has (message and atom ids, scene file names, a persona)
        is kept as it is. Imported messages are not extracted again, and atoms the imported scenes
        consolidate are not consolidated again. The pipeline is held off while it writes.
        Unreadable lines are skipped and reported. Raises ``InputError`` when ``path`` is not such
        a directory.
        """
        self._writable("import")
        data = await asyncio.to_thread(read_tdai, Path(path))
        writer = TdaiImport(
            self._store, self._upper, self._recorder.record, self._vectors, self._pipeline.on_atoms
        )
        async with self._pipeline.exclusive():
            report = await asyncio.to_thread(writer.run, data)
        self._pipeline.wake()
        return report

    # --- internals ------------------------------------------------------------------------------

    def _writable(self, what: str) -> None:
        if self.read_only:
            raise ReadOnlyError(f"cannot {what}: this memory was opened read-only")


def _with_id(s: ImportSession, position: int, m: NewMessage) -> NewMessage:
    if m.id:
        return m
    return NewMessage(
        m.role,
        m.content,
        stable_id(s.tenant, s.session_key, position, str(m.role), m.content),
        m.name,
        m.timestamp,
    )
