"""Durable pipeline state: L1 per session, L2/L3 per tenant (DESIGN section 4)."""

from __future__ import annotations

from dataclasses import dataclass

from memstrata.models.records import Tenant


@dataclass(slots=True)
class SessionState:
    """Durable L1 scheduling state of one session."""

    tenant: Tenant
    session_key: str
    cursor: int = 0  # last L0 seq extracted
    pending: int = 0  # turns captured since the last L1 run
    runs: int = 0  # completed L1 runs (drives warm-up)
    fire_at: int | None = None  # idle timer or retry time, ms
    attempts: int = 0  # consecutive failures
    last_error: str | None = None
    last_activity: int = 0


@dataclass(slots=True)
class TenantState:
    """Durable L2/L3 scheduling state of one tenant (DESIGN section 4).

    L3 requests are counted, not flagged: a trigger bumps ``l3_requested``; a run remembers the
    value it started from and, on success only, sets ``l3_done`` to it. Triggers that arrive during
    a run therefore leave ``l3_requested > l3_done``: exactly one follow-up run, however many came.
    """

    tenant: Tenant
    l2_cursor: int = 0  # last atom seq consolidated into scenes
    l2_fire_at: int | None = None  # the L2 timer, ms (None: not polling)
    last_l2: int | None = None  # when the last L2 run succeeded, ms
    last_active: int = 0  # when an L1 run last wrote atoms, ms
    l2_attempts: int = 0
    l2_error: str | None = None
    l2_snapshot: str | None = None  # scene backup of the run in progress (set: restore after a crash)
    new_atoms: int = 0  # atoms consolidated since the last persona
    l3_requested: int = 0
    l3_done: int = 0
    l3_reasons: tuple[str, ...] = ()  # why L3 was requested since the last persona
    l3_fire_at: int | None = None  # retry backoff after a failure, ms
    l3_attempts: int = 0
    l3_error: str | None = None
    last_l3: int | None = None  # when the last persona was written, ms
    l3_running: bool = False  # a run is in progress (after a crash: restore ``l3_snapshot``)
    l3_snapshot: str | None = None  # persona backup of that run (None: there was no persona)
    # Forgetting: scenes that held atoms since removed, rewritten from their remaining atoms by
    # the next L2 run; a whole re-consolidation asked for; the next persona written from scratch.
    l2_rewrite: tuple[str, ...] = ()
    l2_rebuild: bool = False
    l3_fresh: bool = False


@dataclass(slots=True)
class SweepState:
    """Durable state of the daily retention sweep (one for the whole store)."""

    last_run: int | None = None  # when the last sweep finished, ms (None: never)
    attempts: int = 0  # consecutive failures
    last_error: str | None = None
    retry_at: int | None = None  # after a failure, ms
    last_report: str | None = None  # what the last sweep removed, in words (counts only)
