"""Clocks: the real one, and a fake one that tests move by hand."""

from __future__ import annotations

import asyncio
import time


class SystemClock:
    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class FakeClock:
    """Time stands still until ``advance`` moves it. ``sleep`` yields once and returns."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._now = start_ms

    def now_ms(self) -> int:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += round(seconds * 1000)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(0)
