"""What every part of the facade shares: the parts a memory is made of, the pipeline built from
them, the checks every writing method makes, and what more than one topic does (capture, recall,
ending a session, running everything, writing an import). Every topic class of ``facade``
derives from ``FacadeCore`` alone, so ``AsyncMemory`` is a flat mix with no diamond."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

from memstrata.errors import ReadOnlyError
from memstrata.facade.edits.records import RecordEdits
from memstrata.forgetting.sweep import Sweeper, SweepPolicy
from memstrata.interchange.tdai.load import TdaiImport
from memstrata.interchange.tdai.read import TdaiData, TdaiImportReport
from memstrata.layers.l0.recorder import CaptureResult, MessageInput, Recorder
from memstrata.models import AtomFilter, Layer, MessageFilter, MetadataFilter, Tenant
from memstrata.models.filters import NO_FILTER
from memstrata.operations import Operation
from memstrata.operations import arguments as args
from memstrata.operations.base import describe
from memstrata.pipeline.coordinator import Pipeline, RunAllReport
from memstrata.pipeline.embedding import EmbeddingBacklog
from memstrata.pipeline.handoff import Handoff
from memstrata.pipeline.l1.runner import L1Runner
from memstrata.pipeline.l1.scheduler import Scheduler
from memstrata.pipeline.upper.scheduler import TenantScheduler
from memstrata.recall import Budgets, RecallResult, gather, heated, recall_sources
from memstrata.retrieval.request import SearchRequest
from memstrata.retrieval.search import Searcher
from memstrata.settings import Settings
from memstrata.wiring import Parts

P = ParamSpec("P")
Op = TypeVar("Op", bound=Operation[Any])
S = TypeVar("S", bound="FacadeCore")
R = TypeVar("R")

# Whether recall's search leaves out an atom or a message whose finding a better hit already
# stands for (search's default). Not diversified, both reach ``recall.select``, which decides per
# message whether it is shown raw or as its atoms: answer words in recall's context on the LoCoMo
# dev set 77.6 -> 78.6%, but evidence among recall's hits 84.0 -> 82.8% (LoCoMo) and 55.7 ->
# 54.9% (BEAM; PrefEval 99.6% either way): no leave-one-out fold keeps every set at today's
# figure without it, so it stays (bench/constants_loo.py --constant recall_diversify --best-mean:
# by the best mean alone, 109 of 111 folds would turn it off).
RECALL_DIVERSIFY = True


def operation(
    spec: Callable[P, Op],
) -> Callable[
    [Callable[[S, Op], Coroutine[Any, Any, R]]], Callable[Concatenate[S, P], Coroutine[Any, Any, R]]
]:
    """Make ``body(self, op)`` the public method declared by ``spec`` (``memstrata.operations``):
    the method takes the declaration's parameters, has its signature and docstring, and hands
    the body one instance of it. A parameter is declared once, there."""

    def decorate(
        body: Callable[[S, Op], Coroutine[Any, Any, R]],
    ) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
        async def method(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            # ``spec`` is typed as its constructor (for its parameters); it is an ``Operation`` class.
            return await body(self, spec(*args, **kwargs))

        describe(method, spec)  # type: ignore[arg-type]
        return method

    return decorate


class FacadeCore:
    """The state behind ``AsyncMemory``: built from ``Parts`` by ``AsyncMemory.open``. Parts
    without ``upper`` (scene and persona stores and writers) make a memory whose pipeline stops at
    L1 (tests of L1 rules use that)."""

    def __init__(self, parts: Parts, settings: Settings, *, pipeline_here: bool = True) -> None:
        self.settings = settings
        # False for a server: its workers (``memstrata worker``) run the pipeline, and meet it only
        # through the store; it never starts the background loop, recovers or flushes L1 itself.
        self._pipeline_here = pipeline_here
        self._owns_captures = True  # False for a worker: the captures it extracts are servers'.
        self.read_only = parts.read_only
        self._store = parts.store
        self._clock = parts.clock
        self._vectors = parts.vectors
        self._upper = parts.upper
        self._searcher = Searcher(parts.store, parts.vectors, parts.clock.now_ms)
        p = settings.pipeline
        runner = L1Runner(parts.store, parts.extractor, parts.deduplicator, parts.vectors, parts.clock, p)
        tenants = None
        if parts.upper is not None:
            tenants = TenantScheduler(parts.store, parts.upper, parts.clock, p, settings.persona)
        self._scheduler = Scheduler(
            parts.store, runner, parts.clock, p, tenants.on_l1_atoms if tenants else None
        )
        backlog = EmbeddingBacklog(parts.store, parts.vectors, parts.clock, p.retry_delay_seconds)
        sweeper = Sweeper(
            parts.store,
            parts.clock,
            SweepPolicy.of(settings),
            tenants.hold if tenants else None,
            tenants.on_removed if tenants else None,
        )
        self._pipeline = Pipeline(
            parts.store, self._scheduler, tenants, backlog, parts.clock, sweeper, parts.degradations
        )
        # A server's pipeline calls mark the work due in the store and wait for its workers.
        self._handoff = (
            None
            if pipeline_here
            else Handoff(parts.store, self._pipeline, parts.clock, p, settings.server.pipeline_wait_seconds)
        )
        self._recorder = Recorder(
            parts.store,
            parts.clock,
            parts.vectors,
            max_chars=settings.capture.max_message_chars,
            with_previous=settings.search.context_previous,
            on_stored=self._scheduler.on_capture,
        )
        if not self.read_only and pipeline_here:
            self._pipeline.recover()
        self._background: asyncio.Task[None] | None = None
        self._warming: asyncio.Task[None] | None = None  # a server folding recalls' heat

    def _writable(self, what: str) -> None:
        if self.read_only:
            raise ReadOnlyError(f"cannot {what}: this memory was opened read-only")

    def _forgotten(self, tenant: Tenant) -> None:
        """Drop what this process holds in memory for an erased tenant (sessions to flush on
        close; topic classes add their own)."""
        self._scheduler.forget(tenant)

    @contextlib.asynccontextmanager
    async def _tenant_lock(self, tenant: Tenant) -> AsyncIterator[None]:
        """The tenant's L2/L3 lock and lease, so a scene or persona edit never races a run (in
        this process or a worker)."""
        if self._upper is None:
            yield
            return
        async with self._pipeline.tenants_hold(tenant):
            yield

    @functools.cached_property
    def _data(self) -> RecordEdits:
        """Record-level reads and edits of every layer (``layers.edits``)."""
        return RecordEdits(self._store, self._upper, self._vectors, self._clock.now_ms)

    # --- what more than one topic does (each topic class derives from this core alone) ---------

    async def _capture(
        self,
        messages: Sequence[MessageInput],
        session_key: str,
        session_id: str | None,
        user_id: str,
        agent_id: str,
    ) -> CaptureResult:
        """Store messages of one session (``capture``, ``turn_committed``, imports)."""
        self._writable("capture")
        tenant = args.tenant(user_id, agent_id)
        key = args.name(session_key, "session_key")
        sid = args.name(session_id, "session_id") if session_id is not None else key
        # With a background pipeline the capture's caller (an agent's turn) does not wait for the
        # model: the woken loop embeds this batch with whatever else arrived, in one larger batch.
        # A server's workers embed its captures (their backlog); a library without a background
        # loop embeds them here.
        embed = self._background is None and self._pipeline_here
        if self._background is not None:
            # The window opens before the messages are stored, so a pass of the loop that starts
            # meanwhile leaves them to gather instead of embedding them alone.
            self._pipeline.embedding.gather(self._clock.now_ms())
        result = await asyncio.to_thread(
            functools.partial(self._recorder.record, tenant, key, sid, list(messages), embed=embed)
        )
        self._pipeline.wake()
        return result

    async def _recall(
        self,
        tenant: Tenant,
        query: object,
        *,
        tools: bool = True,
        filters: MetadataFilter = NO_FILTER,
        memory_chars: int | None = None,
    ) -> RecallResult:
        """Recall for ``query`` (``recall``, ``before_prompt``); notes the recalled atoms' heat.
        Without ``tools`` (a host that gives its model no memory tools) the tools guide is left out.
        ``filters`` narrow the search for memories (persona and navigation do not depend on it).
        ``memory_chars``: the memories' own room, apart from the system context (the proxy's)."""
        r = self.settings.recall
        budgets = Budgets(**r.model_dump(exclude={"timeout_ms", "rrf_k", "depth"}))
        text = args.query(query)
        # The same floor as search: an off-topic prompt gets the persona and navigation only.
        request = SearchRequest(
            tenant,
            text,
            (Layer.L1, Layer.L0),
            r.candidates if memory_chars is None else budgets.candidates_for(memory_chars),
            MessageFilter(metadata=filters),
            AtomFilter(metadata=filters),
            plan=args.plan("hybrid", self.settings).with_(
                agreement=False,
                rrf_k=r.rrf_k,
                depth=r.depth,
                findings=False,
                instructions=False,
                diversify=RECALL_DIVERSIFY,
            ),
            min_score=self.settings.search.min_score,
            query_floor=self.settings.search.query_floor,
            standing_floor=self.settings.search.standing_floor,
        )
        sources = recall_sources(self._upper, tenant, lambda: self._searcher.search(request))
        result = await gather(sources, budgets, r.timeout_ms, text, tools=tools, memory_chars=memory_chars)
        upper = self._upper
        if upper is not None and (
            unreadable := upper.persona.problems(tenant) + upper.scenes.problems(tenant)
        ):
            notes = tuple(f"left out: {p}" for p in unreadable)
            result = dataclasses.replace(result, degradations=result.degradations + notes)
        # The writer folds the recalled atoms into their scenes' heat in batches (the pipeline,
        # under the tenant's lock); a read-only memory leaves heat to the writer.
        if not self.read_only and self._upper is not None:
            self._pipeline.heat.note(tenant, heated(result.hits), self._clock.now_ms())
            if not self._pipeline_here and (self._warming is None or self._warming.done()):
                # No loop of ours folds the notes in: a task does, once they are due (a few scene
                # writes under the tenant's lease, after the answer).
                self._warming = asyncio.get_running_loop().create_task(self._pipeline.warm())
        return result

    async def _end_session(self, tenant: Tenant, session_key: str) -> None:
        """Extract what is pending for a session now (``end_session``, imports); a server's
        workers do it, and it waits for them."""
        self._writable("end a session")
        key = args.name(session_key, "session_key")
        if self._handoff is not None:
            await self._handoff.end_session(tenant, key)
        else:
            await self._scheduler.flush([(tenant, key)])

    async def _run_all(self) -> RunAllReport:
        self._writable("run the pipeline")
        if self._handoff is not None:
            return await self._handoff.run_all()
        return await self._pipeline.run_all()

    async def _write_import(self, data: TdaiData) -> TdaiImportReport:
        """Write what an import read (TDAI directory or memstrata export), the pipeline held off."""
        writer = TdaiImport(
            self._store, self._upper, self._recorder.record, self._vectors, self._pipeline.on_atoms
        )
        async with self._pipeline.exclusive():
            report = await asyncio.to_thread(writer.run, data)
        self._pipeline.wake()
        return report
