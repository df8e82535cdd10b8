"""The L2 timer and L3 trigger rules of DESIGN section 4, as pure functions over ``TenantState``.

L2 timer (per tenant, downward-only: it may move earlier, never later)
  after L1 wrote atoms   fire at max(now + delay_after_l1, last_l2 + min_interval), if earlier
                         (a run that failed part-way counts: its committed windows wrote atoms)
  after each L2 run      re-arm at now + max_interval while the tenant is active (an L1 wrote
                         atoms within the active window); a cold tenant stops polling until the next L1;
                         atoms written during the run (past its cursor) keep the L1 rule's time
  failure                retry after retry_delay until max_attempts; new atoms start over
  on open                atoms past the cursor with no timer (their arming was lost to a kill) are
                         armed as after L1; a tenant whose L2 gave up still waits for new atoms
Forgetting (atoms deleted, expired or swept; or a rebuild asked for)
  the scenes that held removed atoms are marked for rewriting and L2 is due now; the next persona
  is written from scratch (not from the current body, which may hold what was removed), requested
  now when the tenant has one; a rebuild re-consolidates every current atom into new scenes
L3 triggers (after L2, or explicit)
  every trigger_every_n atoms consolidated since the last persona; no persona yet; a scene-writer
  ``[PERSONA_UPDATE_REQUEST]``; an explicit request; a flush (``run_all``) when none is pending.
  A trigger bumps ``l3_requested``; a run that succeeds sets ``l3_done`` to the value it started
  from, so triggers during a run make exactly one follow-up. A failed run is not done: it is
  retried after retry_delay, up to max_attempts.
"""

from __future__ import annotations

from dataclasses import dataclass

from memstrata.models import TenantState
from memstrata.settings import PersonaSettings, PipelineSettings

MAX_REASONS = 10


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def is_active(state: TenantState, now: int, s: PipelineSettings) -> bool:
    """Whether an L1 run wrote atoms for the tenant within the active window."""
    return now - state.last_active <= _ms(s.session_active_window_hours * 3600)


def _after_atoms(state: TenantState, now: int, s: PipelineSettings) -> int:
    """When L2 should fire for atoms written now: the delay after L1, but not before the min
    interval since the last L2 run."""
    candidate = now + _ms(s.l2_delay_after_l1_seconds)
    if state.last_l2 is not None:
        candidate = max(candidate, state.last_l2 + _ms(s.l2_min_interval_seconds))
    return candidate


def on_l1_atoms(state: TenantState, now: int, s: PipelineSettings) -> TenantState:
    """An L1 run wrote atoms: the tenant is active and its L2 timer may move earlier."""
    state.last_active = now
    candidate = _after_atoms(state, now, s)
    if state.l2_fire_at is None:
        state.l2_attempts = 0  # idle or given up: new atoms start a fresh series
        state.l2_fire_at = candidate
    elif candidate < state.l2_fire_at:
        state.l2_fire_at = candidate
    return state


def l2_gave_up(state: TenantState, s: PipelineSettings) -> bool:
    """L2 failed ``max_attempts`` times in a row: it waits for the next L1 atoms."""
    return state.l2_fire_at is None and state.l2_attempts >= s.max_attempts


def on_unarmed_atoms(state: TenantState, now: int, s: PipelineSettings) -> TenantState:
    """Atoms wait past the L2 cursor and no timer is armed: the L1 run that wrote them lost its
    arming (a kill between its commit and the arming). Arm as that run would have; the tenant is
    not marked active (no L1 ran now). A tenant whose L2 gave up keeps waiting for new atoms."""
    if state.l2_fire_at is None and not l2_gave_up(state, s):
        state.l2_fire_at = _after_atoms(state, now, s)
    return state


def l2_is_due(state: TenantState, now: int) -> bool:
    return state.l2_fire_at is not None and state.l2_fire_at <= now


@dataclass(frozen=True, slots=True)
class L2Outcome:
    """What an L2 run reports to the rules."""

    cursor: int
    consolidated: int
    persona_requests: tuple[str, ...] = ()
    has_persona: bool = True
    has_scenes: bool = True
    behind: bool = False  # atoms past ``cursor``: an L1 wrote them while the run was in flight


def on_l2_success(
    state: TenantState, outcome: L2Outcome, now: int, s: PipelineSettings, p: PersonaSettings
) -> TenantState:
    """Move the cursor, re-arm (or stop polling when cold), count atoms for L3 and trigger it."""
    state.l2_cursor = max(state.l2_cursor, outcome.cursor)
    state.l2_rewrite = ()  # served (removals take the tenant's lock, as the run does)
    state.l2_rebuild = False
    state.last_l2 = now
    state.l2_attempts = 0
    state.l2_error = None
    state.l2_snapshot = None
    state.l2_fire_at = now + _ms(s.l2_max_interval_seconds) if is_active(state, now, s) else None
    if outcome.behind:  # the re-arm must not push those atoms back to the max interval
        candidate = _after_atoms(state, now, s)
        state.l2_fire_at = candidate if state.l2_fire_at is None else min(state.l2_fire_at, candidate)
    state.new_atoms += outcome.consolidated
    reasons = [f"scene writer: {r}" for r in outcome.persona_requests]
    if state.new_atoms >= p.trigger_every_n and outcome.consolidated:
        reasons.append(f"{state.new_atoms} new atoms since the last persona")
    if not outcome.has_persona and outcome.has_scenes:
        reasons.append("no persona yet")
    if reasons:
        request_l3(state, reasons)
    return state


def on_l2_failure(state: TenantState, error: str, now: int, s: PipelineSettings) -> TenantState:
    state.l2_attempts += 1
    state.l2_error = error
    state.l2_snapshot = None  # restored by the caller
    if state.l2_attempts < s.max_attempts:
        state.l2_fire_at = now + _ms(s.retry_delay_seconds)
    else:
        state.l2_fire_at = None  # given up until the next L1 writes atoms; status shows the error
    return state


def request_l3(state: TenantState, reasons: list[str]) -> TenantState:
    """Trigger L3 (coalesced with any trigger not yet served). A new request resets failures."""
    state.l3_requested += 1
    state.l3_reasons = (*state.l3_reasons, *reasons)[-MAX_REASONS:]
    state.l3_attempts = 0
    state.l3_fire_at = None
    return state


def flush_l3(state: TenantState, reason: str) -> TenantState:
    """A flush wants the persona now: it serves the pending request when there is one (retried at
    once), else makes one. Counting another would make the counters differ between a clean run
    and one a crash interrupted, for the same single run."""
    if state.l3_requested > state.l3_done:
        state.l3_attempts = 0
        state.l3_fire_at = None
        return state
    return request_l3(state, [reason])


def l3_is_due(state: TenantState, now: int, s: PipelineSettings) -> bool:
    if state.l3_requested <= state.l3_done or state.l3_running:
        return False
    if state.l3_attempts >= s.max_attempts:
        return False  # given up until the next request
    return state.l3_fire_at is None or state.l3_fire_at <= now


@dataclass(frozen=True, slots=True)
class L3Start:
    """What a run took on: the request count it serves and the atoms it covers."""

    generation: int
    atoms: int


def on_l3_start(state: TenantState, snapshot: str | None) -> L3Start:
    state.l3_running = True
    state.l3_snapshot = snapshot
    return L3Start(state.l3_requested, state.new_atoms)


def on_l3_success(state: TenantState, start: L3Start, now: int) -> TenantState:
    state.l3_done = max(state.l3_done, start.generation)
    state.new_atoms = max(0, state.new_atoms - start.atoms)
    state.last_l3 = now
    state.l3_running = False
    state.l3_snapshot = None
    state.l3_attempts = 0
    state.l3_error = None
    state.l3_fire_at = None
    if state.l3_done >= state.l3_requested:
        state.l3_reasons = ()
        state.l3_fresh = False
    return state


def on_l3_failure(state: TenantState, error: str, now: int, s: PipelineSettings) -> TenantState:
    state.l3_running = False
    state.l3_snapshot = None  # restored by the caller
    state.l3_attempts += 1
    state.l3_error = error
    state.l3_fire_at = now + _ms(s.retry_delay_seconds) if state.l3_attempts < s.max_attempts else None
    return state


def _due_now(state: TenantState, now: int) -> None:
    if state.l2_fire_at is None or state.l2_fire_at > now:
        state.l2_fire_at = now
    state.l2_attempts = 0


def on_demand(state: TenantState, now: int) -> TenantState:
    """A caller wants the atoms after the L2 cursor consolidated now (a server's ``run_all``: its
    workers run it): L2 due now, failures forgotten (as a forced run ignores them)."""
    _due_now(state, now)
    return state


def on_removed(state: TenantState, scenes: tuple[str, ...], has_persona: bool, now: int) -> TenantState:
    """Atoms left the tenant: rewrite the ``scenes`` that held them (L2 due now) and write the next
    persona afresh (requested now when there is one)."""
    if scenes:
        state.l2_rewrite = tuple(sorted({*state.l2_rewrite, *scenes}))
        _due_now(state, now)
    state.l3_fresh = True
    if has_persona:
        request_l3(state, ["memories were removed"])
    return state


def on_rebuild(state: TenantState, now: int) -> TenantState:
    """Re-consolidate the tenant from its current atoms (L2 due now), then a fresh persona."""
    state.l2_rebuild = True
    state.l3_fresh = True
    _due_now(state, now)
    request_l3(state, ["scenes rebuilt"])
    return state


def on_restart(state: TenantState, now: int) -> TenantState:
    """After a crash mid-run (the caller restored the backups): run again at once."""
    if state.l2_snapshot is not None:
        state.l2_snapshot = None
        state.l2_fire_at = now
    if state.l3_running:
        state.l3_running = False
        state.l3_snapshot = None
        state.l3_fire_at = None
    return state
