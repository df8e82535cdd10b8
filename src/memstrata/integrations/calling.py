"""One way to call a memory's public method from an adapter, whichever memory it was given: the
library's ``Memory`` / ``AsyncMemory`` or the HTTP client's ``Client`` / ``AsyncClient`` answer
the same names with the same parameters, blocking or awaitable. A framework's async entry point
awaits an async memory and runs a blocking one in a worker thread; its sync entry point needs a
blocking memory (an async one would need the caller's event loop)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Coroutine
from typing import Any, Protocol, TypeVar, cast

from memstrata.errors import ConfigError

R = TypeVar("R")


def is_async(mem: object) -> bool:
    """Whether ``mem``'s methods are coroutines (``AsyncMemory``, ``AsyncClient``)."""
    return inspect.iscoroutinefunction(getattr(mem, "search", None))


def call(mem: object, name: str, /, *args: Any, **kwargs: Any) -> Any:
    """``mem.name(*args, **kwargs)`` from blocking code."""
    if is_async(mem):
        raise ConfigError(
            f"{type(mem).__name__} is async: use the adapter's async method, or open the memory "
            "with Memory.open for blocking code"
        )
    return getattr(mem, name)(*args, **kwargs)


async def acall(mem: object, name: str, /, *args: Any, **kwargs: Any) -> Any:
    """``mem.name(*args, **kwargs)`` from async code (a blocking memory runs in a thread)."""
    method = getattr(mem, name)
    if is_async(mem):
        return await method(*args, **kwargs)
    return await asyncio.to_thread(method, *args, **kwargs)


class Invoke(Protocol):
    """How adapter logic calls the memory: ``await invoke("search", query, user_id=...)``."""

    def __call__(self, name: str, /, *args: Any, **kwargs: Any) -> Awaitable[Any]: ...


def blocking(mem: object) -> Invoke:
    """An ``Invoke`` that calls a blocking memory directly: logic awaiting only it never
    suspends, so ``drive`` runs it to the end without an event loop."""
    if is_async(mem):
        call(mem, "search")  # raises the ConfigError that names the fix

    async def invoke(name: str, /, *args: Any, **kwargs: Any) -> Any:
        return getattr(mem, name)(*args, **kwargs)

    return invoke


def awaiting(mem: object) -> Invoke:
    """An ``Invoke`` for async code, whichever memory it is (see ``acall``)."""

    async def invoke(name: str, /, *args: Any, **kwargs: Any) -> Any:
        return await acall(mem, name, *args, **kwargs)

    return invoke


def drive(coro: Coroutine[Any, Any, R]) -> R:
    """Run a coroutine that awaits only a ``blocking`` invoke, in the calling thread. Adapter
    logic is written once, async; a framework's sync entry point runs it through here, so it
    works inside a running event loop too (``asyncio.run`` would not)."""
    try:
        coro.send(None)
    except StopIteration as done:
        return cast(R, done.value)
    coro.close()
    raise RuntimeError("adapter logic suspended on a blocking memory (an adapter bug)")
