"""The background loop's pacing (``memstrata.pace``): it waits for a lull in the operations, never
longer than its cap, and only inside ``paced``."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from memstrata import pace
from memstrata.pace import Foreground, paced, to_thread


async def test_with_nothing_in_flight_a_step_does_not_wait() -> None:
    fg = Foreground()
    await fg.quiet()
    assert fg.status().steps == 1
    assert fg.status().deferred == 0


async def test_a_step_waits_until_the_operation_in_flight_ends() -> None:
    fg = Foreground()
    ended = asyncio.Event()

    async def operation() -> None:
        with fg.serving():
            await ended.wait()

    op = asyncio.create_task(operation())
    await asyncio.sleep(0)  # the operation is in flight
    step = asyncio.create_task(fg.quiet())
    await asyncio.sleep(0.03)
    assert not step.done()
    ended.set()
    await op
    started = time.monotonic()
    await asyncio.wait_for(step, 1)
    assert time.monotonic() - started >= pace.QUIET_SECONDS * 0.9  # and the lull after it
    report = fg.status()
    assert (report.steps, report.deferred, report.capped) == (1, 1, 0)
    assert report.waited_ms >= 30


async def test_a_step_right_after_an_operation_waits_out_the_lull() -> None:
    fg = Foreground()
    with fg.serving():
        pass
    started = time.monotonic()
    await fg.quiet()
    assert time.monotonic() - started >= pace.QUIET_SECONDS * 0.9
    assert fg.status().deferred == 1


async def test_operations_without_a_pause_delay_a_step_by_the_cap_at_most(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pace, "MOST_SECONDS", 0.05)
    fg = Foreground()
    with fg.serving():
        started = time.monotonic()
        await fg.quiet()
        waited = time.monotonic() - started
    assert 0.04 <= waited < 0.5
    assert fg.status().capped == 1


async def test_to_thread_waits_only_inside_paced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pace, "MOST_SECONDS", 0.05)
    fg = Foreground()
    with fg.serving():
        ran_in = await to_thread(threading.get_ident)  # outside the loop's context: at once
        assert ran_in != threading.get_ident()
        assert fg.status().steps == 0
        with paced(fg):
            # A task started inside ``paced`` is paced too (it copies the context).
            await asyncio.create_task(to_thread(lambda: None))
        assert fg.status().steps == 1
        assert fg.status().capped == 1
        await to_thread(lambda: None)  # the block ended: not paced again
    assert fg.status().steps == 1


async def test_nested_operations_count_as_one_in_flight_until_the_last_ends() -> None:
    fg = Foreground()
    with fg.serving():
        with fg.serving():
            pass
        step = asyncio.create_task(fg.quiet())
        await asyncio.sleep(0.02)
        assert not step.done()
    await asyncio.wait_for(step, 1)


async def test_a_cancelled_step_stops_waiting() -> None:
    fg = Foreground()
    with fg.serving():
        step = asyncio.create_task(fg.quiet())
        await asyncio.sleep(0.01)
        step.cancel()
        with pytest.raises(asyncio.CancelledError):
            await step


async def test_an_operation_waiting_for_the_pipeline_does_not_hold_it_back() -> None:
    fg = Foreground()
    with fg.serving():
        with fg.waiting():  # e.g. for the tenant lock an L2 run holds
            await asyncio.sleep(pace.QUIET_SECONDS * 2)
            await asyncio.wait_for(fg.quiet(), pace.MOST_SECONDS / 2)  # the run goes on
        step = asyncio.create_task(fg.quiet())  # the lock is the operation's: in flight again
        await asyncio.sleep(0.02)
        assert not step.done()
    await asyncio.wait_for(step, 1)


async def test_waiting_outside_an_operation_changes_nothing() -> None:
    fg = Foreground()
    inside, release = asyncio.Event(), asyncio.Event()

    async def elsewhere() -> None:  # not an operation: its wait must not end another's turn
        with fg.waiting():
            inside.set()
            await release.wait()

    other = asyncio.create_task(elsewhere())  # started outside any operation
    with fg.serving():
        await inside.wait()
        step = asyncio.create_task(fg.quiet())
        await asyncio.sleep(0.02)
        assert not step.done()
        release.set()
        await other
    await asyncio.wait_for(step, 1)


async def test_a_task_an_operation_left_behind_and_a_nested_wait_change_nothing() -> None:
    fg = Foreground()
    release = asyncio.Event()

    async def left_behind() -> None:  # started by the operation, still running after it ended
        await release.wait()
        with fg.waiting():
            pass

    with fg.serving():
        task = asyncio.create_task(left_behind())
        with fg.waiting():
            with fg.waiting():  # a second lock inside the first: still one operation
                pass
            await asyncio.wait_for(fg.quiet(), 1)  # waiting: the loop goes on
        other = asyncio.create_task(fg.quiet())
        await asyncio.sleep(0.02)
        assert not other.done()  # in flight again after its wait, exactly once
    release.set()
    await task
    await asyncio.wait_for(other, 1)
    with fg.serving():  # the count was not driven below zero: this one holds the loop back
        step = asyncio.create_task(fg.quiet())
        await asyncio.sleep(0.02)
        assert not step.done()
    await asyncio.wait_for(step, 1)
