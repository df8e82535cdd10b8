"""The L1 scheduling rules of DESIGN section 4, as pure functions over ``SessionState``.

capture   pending += turns; attempts reset (new activity); fire now when pending reaches the
          threshold (warm-up: 1, 2, 4, ... up to N by completed runs), else (re)arm the idle timer
success   pending = 0, runs += 1, timer cleared, failures cleared
failure   attempts += 1; retry after ``retry_delay`` until ``max_attempts``, then wait for activity
demand    a caller wants the backlog extracted now (a server's ``end_session``, ``run_all``, an
          import: its workers run it): due now, failures forgotten (as a forced run ignores them)
restart   a session with unprocessed messages is due at once (unless failing: backoff stays); its
          last activity is at least its last message's (a kill may have lost the capture's update)
"""

from __future__ import annotations

from memstrata.models import SessionState
from memstrata.settings import PipelineSettings


def threshold(runs: int, s: PipelineSettings) -> int:
    """Turns that trigger the next L1 run: 1, 2, 4, ... capped at N with warm-up; N without."""
    if not s.warm_up:
        return s.every_n_conversations
    return min(s.every_n_conversations, 1 << min(runs, 30))


def on_capture(state: SessionState, turns: int, now: int, s: PipelineSettings) -> SessionState:
    state.pending += turns
    state.last_activity = now
    state.attempts = 0
    state.last_error = None
    if state.pending >= threshold(state.runs, s):
        state.fire_at = now
    else:
        state.fire_at = now + round(s.l1_idle_timeout_seconds * 1000)
    return state


def on_success(state: SessionState) -> SessionState:
    state.pending = 0
    state.runs += 1
    state.fire_at = None
    state.attempts = 0
    state.last_error = None
    return state


def on_failure(state: SessionState, error: str, now: int, s: PipelineSettings) -> SessionState:
    state.attempts += 1
    state.last_error = error
    if state.attempts < s.max_attempts:
        state.fire_at = now + round(s.retry_delay_seconds * 1000)
    else:
        state.fire_at = None  # given up until new activity; status shows the error
    return state


def on_demand(state: SessionState, now: int) -> SessionState:
    state.attempts = 0
    if state.fire_at is None or state.fire_at > now:
        state.fire_at = now
    return state


def on_restart(state: SessionState, now: int, last_recorded: int) -> SessionState:
    # The process that armed the idle timer is gone: resume its backlog at once. A session in
    # retry backoff keeps its backoff, and one that gave up waits for new activity.
    if state.attempts == 0:
        state.fire_at = now
    # A kill between a capture's commit and its state update lost the activity time: the log has it.
    state.last_activity = max(state.last_activity, last_recorded)
    return state


def is_due(state: SessionState, now: int) -> bool:
    return state.fire_at is not None and state.fire_at <= now
