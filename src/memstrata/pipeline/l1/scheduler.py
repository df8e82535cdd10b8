"""When pipeline stages run. All state lives in the store (``PipelineState``); this object only
holds locks, so a restart resumes where the last process stopped.

One L1 run per session at a time (a lock per key, and the session's lease across processes); at
most ``workers`` runs at once across keys. State updates are atomic in the store
(``keyed.StateBook``). A failure of any kind, even of the store, is recorded in the session's
state and never stops another session.
"""

from __future__ import annotations

import asyncio
import logging
import time
from asyncio import to_thread
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial

from memstrata.models import SessionState, SessionStatus, Tenant
from memstrata.pipeline.keyed import KeyedRuns, StateBook, claimed, lease_key, log_failure, waited
from memstrata.pipeline.l1 import rules
from memstrata.pipeline.l1.runner import L1Progress, L1Report, L1Runner
from memstrata.ports import Clock, Store
from memstrata.settings import PipelineSettings

log = logging.getLogger(__name__)
Key = tuple[Tenant, str]
_HOLD_SECONDS = 5.0  # session_held: how long a session another process runs is waited for


@dataclass(slots=True)
class L1Tally:
    """What a set of L1 runs did, for reports and progress: runs that ran (a session another
    process holds, or one not due, is no run), runs that failed, atoms they committed (a run that
    failed part-way counts the windows it committed)."""

    runs: int = 0
    failed: int = 0
    atoms: int = 0


class Scheduler:
    """L1 scheduling per session. ``on_atoms(tenant)`` is called after each L1 run that committed
    atoms, whether it then succeeded or failed part-way (it arms the tenant's L2 timer). A kill
    between the commit and that call is repaired on open by ``TenantScheduler.recover``."""

    def __init__(
        self,
        store: Store,
        l1: L1Runner,
        clock: Clock,
        settings: PipelineSettings,
        on_atoms: Callable[[Tenant], None] | None = None,
    ) -> None:
        self._store = store
        self._on_atoms = on_atoms
        self._l1 = l1
        self._clock = clock
        self._s = settings
        self._runs: KeyedRuns[Key] = KeyedRuns(settings.workers)
        self._book: StateBook[Key, SessionState] = StateBook(
            lambda key, change: store.pipeline.update_session(*key, change)
        )
        self.touched: set[Key] = set()

    # --- state transitions (sync: called from worker threads too) -----------------------------

    def _mutate(
        self, tenant: Tenant, session_key: str, change: Callable[[SessionState], object]
    ) -> SessionState:
        return self._book.mutate((tenant, session_key), change)

    def on_capture(self, tenant: Tenant, session_key: str, turns: int) -> None:
        now = self._clock.now_ms()
        self._mutate(tenant, session_key, lambda st: rules.on_capture(st, turns, now, self._s))
        self.touched.add((tenant, session_key))

    def forget(self, tenant: Tenant) -> None:
        """The tenant was erased: its sessions are no longer this process's to flush."""
        self.touched = {key for key in self.touched if key[0] != tenant}

    def recover(self) -> int:
        """Re-arm sessions that have unprocessed messages (after a crash or a stop)."""
        now = self._clock.now_ms()
        backlog = self._store.pipeline.backlog()
        for tenant, key, _ in backlog:
            last = self._store.messages.last(tenant, key)
            self._mutate(
                tenant, key, partial(rules.on_restart, now=now, last_recorded=last.recorded_at if last else 0)
            )
        return len(backlog)

    # --- a server's calls, run by its workers (``pipeline.handoff``) --------------------------------

    def demand(self, tenant: Tenant, session_key: str) -> int | None:
        """Mark the session's backlog due now, for the workers to run; the seq its cursor must
        reach (its last message's), or None when nothing is left to extract."""
        last = self._store.messages.last(tenant, session_key)
        target = last.seq if last is not None else 0
        if self._store.pipeline.session(tenant, session_key).cursor >= target:
            return None
        now = self._clock.now_ms()
        self._mutate(tenant, session_key, lambda st: st.cursor < target and rules.on_demand(st, now))
        return target

    def demanded(self, tenant: Tenant, session_key: str, target: int) -> bool | None:
        """Where a ``demand`` stands: True when the cursor reached ``target``, False when a run
        failed since (recorded in the session's state, as a forced run's failure is), None while
        waiting. A run that ended before the demand re-arms the rest on its idle timer: it is
        marked due again."""
        st = self._store.pipeline.session(tenant, session_key)
        if st.cursor >= target:
            return True
        if st.attempts:
            return False
        now = self._clock.now_ms()
        if st.fire_at is None or st.fire_at > now:
            self._mutate(
                tenant,
                session_key,
                lambda s: s.cursor < target and not s.attempts and rules.on_demand(s, now),
            )
        return None

    # --- running --------------------------------------------------------------------------------

    async def run_due(self) -> int:
        """Run every session that is due now, repeatedly, until none is. Returns runs attempted."""
        ran = 0
        while True:
            now = self._clock.now_ms()
            states = await to_thread(partial(self._store.pipeline.armed, due_by=now))
            due = [(s.tenant, s.session_key) for s in states if rules.is_due(s, now)]
            if not due:
                return ran
            await asyncio.gather(*(self.run_session(t, k) for t, k in due))
            ran += len(due)

    async def flush(self, keys: list[Key] | None = None, tally: L1Tally | None = None) -> int:
        """Run L1 now on what is pending, due or not: every session with a backlog, or ``keys``.
        Returns the sessions run; ``tally`` (if given) adds what they did."""
        if keys is None:
            backlog = await to_thread(self._store.pipeline.backlog)
            keys = [(t, k) for t, k, _ in backlog]
        await asyncio.gather(*(self.run_session(t, k, force=True, tally=tally) for t, k in keys))
        return len(keys)

    async def flush_touched(self, within: float | None = None, *, every: bool = False) -> int:
        """Shutdown: run L1 on the backlog of the sessions this process captured (``every``: of
        every session, a worker's). Sessions already caught up are left alone, so their run
        count, which drives warm-up, stays true. With ``within`` (seconds), no window starts after
        that long: what is left stays in the durable backlog for the next process, and is logged."""
        backlog = await to_thread(self._store.pipeline.backlog)
        if within is not None:
            self._l1.stop_at = time.monotonic() + within
        try:
            ran = await self.flush([(t, k) for t, k, _ in backlog if every or (t, k) in self.touched])
        finally:
            self._l1.stop_at = None
        if within is not None:
            left = await to_thread(self._store.pipeline.backlog)
            if left:
                log.warning(
                    "shutdown: %d messages of %d sessions left for the next start (L1 ran %.0f s)",
                    sum(n for _, _, n in left),
                    len(left),
                    within,
                )
        return ran

    @asynccontextmanager
    async def session_held(self, tenant: Tenant, session_key: str) -> AsyncIterator[None]:
        """No L1 run of the session, in this process or another, while the caller holds this
        (``remember`` stores a message and its atom under it, so L1 never extracts the message
        twice). Another process's run is waited for, a few seconds at most (``ConflictError``).
        Only the session's own lock is taken here, not one of the runs' ``workers`` slots: a
        caller never queues behind background runs of other sessions (issue 48)."""
        async with self._runs.lock((tenant, session_key)):
            key = lease_key("l1", tenant, session_key)
            async with waited(self._store.leases, key, _HOLD_SECONDS, f"session {session_key!r}", tenant):
                yield

    async def run_session(
        self, tenant: Tenant, session_key: str, *, force: bool = False, tally: L1Tally | None = None
    ) -> L1Report | None:
        """One L1 run of the session (when due, or ``force``). Returns its report, or None when it
        did not run or failed (the failure is recorded in the session state and retried)."""
        async with self._runs.hold((tenant, session_key)):
            progress = L1Progress()
            report: L1Report | None = None
            try:
                async with claimed(self._store.leases, lease_key("l1", tenant, session_key)) as mine:
                    if not mine:  # another process runs this session now
                        return None
                    state = await to_thread(self._store.pipeline.session, tenant, session_key)
                    if not force and not rules.is_due(state, self._clock.now_ms()):
                        return None
                    if tally is not None:
                        tally.runs += 1
                    report = await self._l1.run(tenant, session_key, progress)
                    await to_thread(self._succeeded, tenant, session_key)
            except Exception as exc:  # noqa: BLE001 - every failure is recorded, logged and retried
                await self._record_failure(tenant, session_key, exc)
                report = None
                if tally is not None:
                    tally.failed += 1
            if tally is not None:
                tally.atoms += progress.atoms
            # Windows committed before a failure count too: their atoms need L2 all the same.
            if progress.atoms and self._on_atoms is not None:
                await to_thread(self._on_atoms, tenant)
            return report

    async def _record_failure(self, tenant: Tenant, session_key: str, exc: Exception) -> None:
        try:
            await to_thread(self._failed, tenant, session_key, exc)
        except Exception as second:  # noqa: BLE001 - the store itself failed: log, never stop others
            log.error(
                "L1 %s/%s failed (%s) and its failure could not be recorded: %s",
                tenant,
                session_key,
                exc,
                second,
            )

    def _failed(self, tenant: Tenant, session_key: str, exc: BaseException) -> None:
        now = self._clock.now_ms()
        message = f"{type(exc).__name__}: {exc}"
        st = self._mutate(tenant, session_key, lambda s: rules.on_failure(s, message, now, self._s))
        log_failure(log, f"L1 run for {tenant}/{session_key}", st.attempts, exc)

    def _succeeded(self, tenant: Tenant, session_key: str) -> None:
        now = self._clock.now_ms()

        def change(st: SessionState) -> None:
            rules.on_success(st)
            # A message captured after the last window was read: keep it armed, not forgotten.
            if self._store.messages.after(tenant, session_key, st.cursor, 1):
                rules.on_capture(st, 1, now, self._s)

        self._mutate(tenant, session_key, change)

    def next_fire(self) -> int | None:
        """The earliest armed L1 timer, ms (None: nothing armed)."""
        first = self._store.pipeline.armed(limit=1)
        return first[0].fire_at if first else None

    def status(self) -> list[SessionStatus]:
        lags = {(t, k): n for t, k, n in self._store.pipeline.backlog()}
        return [
            SessionStatus(
                s.tenant,
                s.session_key,
                s.cursor,
                s.pending,
                lags.get((s.tenant, s.session_key), 0),
                s.fire_at,
                s.attempts,
                s.last_error,
            )
            for s in self._store.pipeline.sessions()
        ]
