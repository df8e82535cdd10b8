"""The retention sweep: forgetting on a schedule, run by the pipeline as a durable stage.

Once a day at ``retention.sweep_at`` (local time; ``schedule``) and at once when one was missed
while the memory was closed, it deletes:

- L0 messages said before ``capture.retention_days`` ago, except each session's newest
  ``capture.retention_keep_last`` and any message L1 has not extracted yet; atoms taken from them
  keep their text and list the swept ids in ``metadata.sources_swept``;
- atoms whose ``expires_at`` has passed, and (``retention.atoms_days``) atoms not updated for that
  long: never pinned ones. Their scenes and the persona are rewritten without them (``on_removed``).

Its last run time, failures and retry time live in the store (``PipelineState.sweep``). A failed
sweep is retried after ``pipeline.retry_delay_seconds``; after ``pipeline.max_attempts`` failures
it waits for the next scheduled time.
"""

from __future__ import annotations

import contextlib
import logging
from asyncio import to_thread
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from memstrata.forgetting import dependants, schedule
from memstrata.models import Atom, Layer, MessageFilter, SweepReport, Tenant
from memstrata.ports import Clock, Store
from memstrata.settings import Settings

log = logging.getLogger(__name__)
PAGE = 1000
# Messages (and atoms) deleted per write transaction. On SQLite a server's capture waits at most
# ``WRITE_WAIT_MS`` (1 s) for the worker's write lock; one session's 20,000 messages in one
# transaction held it 350 ms (their vectors 169 ms more) on the shared 2-core machine at load
# 2.5, and a worker at nice 10 beside busy nice-0 processes gets down to a tenth of a core
# (bench/sweep_delete.py; 500 messages: 7 ms). Each batch is whole on its own: after a crash
# between two, the next sweep (due at once: this one never recorded its run) deletes the rest.
DELETE_BATCH = 500
Hold = Callable[[Tenant], AbstractAsyncContextManager[object]]
OnRemoved = Callable[[Tenant, Sequence[str]], None]


@dataclass(frozen=True, slots=True)
class SweepPolicy:
    """What the sweep removes and when it runs (from the settings)."""

    message_days: float | None = None
    keep_last: int = 20
    atom_days: float | None = None
    at: str = "03:30"
    zone: ZoneInfo | None = None
    retry_ms: int = 30_000
    max_attempts: int = 5

    @classmethod
    def of(cls, s: Settings) -> SweepPolicy:
        r = s.retention
        return cls(
            s.capture.retention_days,
            s.capture.retention_keep_last,
            r.atoms_days,
            r.sweep_at,
            ZoneInfo(r.timezone) if r.timezone else None,
            round(s.pipeline.retry_delay_seconds * 1000),
            s.pipeline.max_attempts,
        )


class Sweeper:
    """Runs the sweep when due (``run_due``) or now (``run``). ``hold(tenant)`` is the tenant's
    L2/L3 lock (atoms and scene membership change under it); ``on_removed(tenant, scenes)`` tells
    the L2/L3 scheduler which scenes lost atoms."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        policy: SweepPolicy,
        hold: Hold | None = None,
        on_removed: OnRemoved | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._p = policy
        self._hold = hold
        self._on_removed = on_removed

    def next_fire(self) -> int:
        """When the sweep is due next, ms (0: now)."""
        return schedule.due_at(self._store.pipeline.sweep(), self._p.at, self._p.zone)

    def last_run(self) -> int | None:
        return self._store.pipeline.sweep().last_run

    def problem(self) -> str | None:
        """The last failure, in words, while the sweep keeps failing."""
        error = self._store.pipeline.sweep().last_error
        return f"retention sweep: {error}" if error else None

    async def run_due(self) -> SweepReport | None:
        """Run the sweep when it is due; None when it was not."""
        due = await to_thread(self.next_fire)
        return await self.run() if due <= self._clock.now_ms() else None

    async def run(self) -> SweepReport:
        """Sweep now. A failure is recorded (and retried later) and raised."""
        now = self._clock.now_ms()
        try:
            messages, marked = await to_thread(self._sweep_messages, now)
            expired, aged, tenants = await self._sweep_atoms(now)
        except Exception as exc:
            await to_thread(self._failed, now, exc)
            raise
        report = SweepReport(now, messages, marked, expired, aged, tenants)
        await to_thread(self._done, now, report)
        if report.removed():
            log.info("retention sweep: %s", report.describe())
        return report

    # --- L0 -------------------------------------------------------------------------------------

    def _sweep_messages(self, now: int) -> tuple[int, int]:
        before = schedule.cutoff(now, self._p.message_days)
        if before is None:
            return 0, 0
        removed = marked = 0
        for tenant, session_key in self._store.messages.sessions(None):
            ids = self._past_retention(tenant, session_key, before)
            changed: set[str] = set()  # an atom citing messages of two batches counts once
            for start in range(0, len(ids), DELETE_BATCH):
                gone = self._store.messages.delete(tenant, ids[start : start + DELETE_BATCH])
                self._store.index.drop_vectors(tenant, Layer.L0, [m.seq for m in gone])
                changed |= dependants.mark_swept(self._store, tenant, [m.id for m in gone])
                removed += len(gone)
            marked += len(changed)
        return removed, marked

    def _past_retention(self, tenant: Tenant, session_key: str, before: int) -> list[str]:
        """Ids of the session's messages said before ``before`` that the guards allow: extracted
        by L1 (seq up to the session's cursor) and older than its newest ``keep_last``."""
        bound = self._store.pipeline.session(tenant, session_key).cursor
        if self._p.keep_last:
            newest = self._store.messages.before(tenant, session_key, 1 << 62, self._p.keep_last)
            if len(newest) < self._p.keep_last:
                return []
            bound = min(bound, newest[0].seq - 1)
        ids: list[str] = []
        after = 0
        flt = MessageFilter(session_key, until=before)
        while page := self._store.messages.list(tenant, flt, limit=PAGE, after_seq=after):
            ids += [m.id for m in page if m.seq <= bound]
            if page[-1].seq >= bound:
                break
            after = page[-1].seq
        return ids

    # --- L1 -------------------------------------------------------------------------------------

    async def _sweep_atoms(self, now: int) -> tuple[int, int, tuple[Tenant, ...]]:
        older = schedule.cutoff(now, self._p.atom_days)
        expired = aged = 0
        touched: dict[Tenant, None] = {}
        after = 0
        while page := await to_thread(self._store.atoms.sweepable, now, older, PAGE, after):
            after = page[-1].seq
            for tenant, found in _by_tenant(page).items():
                for start in range(0, len(found), DELETE_BATCH):  # bounded transactions, as above
                    atoms = found[start : start + DELETE_BATCH]
                    dropped = await self._drop(tenant, atoms)
                    if dropped.atoms:
                        touched[tenant] = None
                    chosen = {a.id for a in atoms if a.expired(now)}
                    expired += sum(1 for a in dropped.atoms if a.id in chosen)
                    aged += sum(1 for a in dropped.atoms if a.id not in chosen)
        return expired, aged, tuple(touched)

    async def _drop(self, tenant: Tenant, atoms: list[Atom]) -> dependants.Dropped:
        lock = self._hold(tenant) if self._hold is not None else contextlib.nullcontext()
        async with lock:
            dropped = await to_thread(dependants.drop_atoms, self._store, tenant, [a.id for a in atoms])
            if dropped.atoms and self._on_removed is not None:
                await to_thread(self._on_removed, tenant, dropped.scenes)
        return dropped

    # --- state ----------------------------------------------------------------------------------

    def _done(self, now: int, report: SweepReport) -> None:
        state = self._store.pipeline.sweep()
        state.last_run, state.attempts, state.last_error, state.retry_at = now, 0, None, None
        state.last_report = report.describe()
        self._store.pipeline.save_sweep(state)

    def _failed(self, now: int, exc: BaseException) -> None:
        state = self._store.pipeline.sweep()
        state.attempts += 1
        state.last_error = f"{type(exc).__name__}: {exc}"
        if state.attempts < self._p.max_attempts:
            state.retry_at = now + self._p.retry_ms
        else:  # given up until the next scheduled time; status keeps showing the error
            state.retry_at, state.last_run = None, now
        log.warning("retention sweep failed (attempt %d): %s", state.attempts, state.last_error)
        self._store.pipeline.save_sweep(state)


def _by_tenant(atoms: Sequence[Atom]) -> dict[Tenant, list[Atom]]:
    found: dict[Tenant, list[Atom]] = {}
    for a in atoms:
        found.setdefault(a.tenant, []).append(a)
    return found
