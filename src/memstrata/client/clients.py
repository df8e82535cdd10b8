"""``MemoryClient`` (blocking) and ``AsyncMemoryClient``: the library's methods, over HTTP.

    with MemoryClient("http://127.0.0.1:8420", api_key="...") as mem:
        mem.capture([{"role": "user", "content": "I moved to Lisbon."}], session_key="chat-1")
        print(mem.recall("where do I live?").prepend_context)

Each method is generated from ``Calls`` (same name, parameters and result type as the facade's);
the two classes differ only in their transport. ``Memory.open("http://...")`` returns the
blocking one, ``AsyncMemory.open("http://...")`` the async one.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from memstrata.client.calls import Call, Calls
from memstrata.client.exchange import CircuitBreaker, Exchange, RetryPolicy
from memstrata.errors import ConfigError

P = ParamSpec("P")
R = TypeVar("R")
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"user-agent": "memstrata-client"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    return headers


def _base(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"not a server URL (http:// or https://): {url!r}")
    return url.rstrip("/")


def _sync(fn: Callable[Concatenate[Calls, P], Call[R]]) -> Callable[Concatenate[MemoryClient, P], R]:
    def method(self: MemoryClient, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._run(fn(self._calls, *args, **kwargs))

    functools.update_wrapper(method, fn)
    return method


def _async(
    fn: Callable[Concatenate[Calls, P], Call[R]],
) -> Callable[Concatenate[AsyncMemoryClient, P], Coroutine[Any, Any, R]]:
    async def method(self: AsyncMemoryClient, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._run(fn(self._calls, *args, **kwargs))

    functools.update_wrapper(method, fn)
    return method


class _Base:
    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        retries: int = 3,
        backoff: float = 0.2,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self.url = _base(url)
        self._calls = Calls()
        self._policy = RetryPolicy(retries=retries, backoff=backoff)
        self._breaker = breaker or CircuitBreaker()
        self._options: dict[str, Any] = {
            "base_url": self.url,
            "headers": _headers(api_key),
            "timeout": timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout),
        }


class MemoryClient(_Base):
    """The blocking client; ``transport`` is for tests (e.g. ``httpx.MockTransport``)."""

    def __init__(self, url: str, *, transport: httpx.BaseTransport | None = None, **options: Any) -> None:
        super().__init__(url, **options)
        self._http = httpx.Client(transport=transport, **self._options)

    def _run(self, call: Call[R]) -> R:
        ex = Exchange(call, self._policy, self._breaker)
        while True:
            try:
                outcome: httpx.Response | httpx.TransportError = self._http.request(**ex.request())
            except httpx.TransportError as exc:
                outcome = exc
            wait = ex.judge(outcome)
            if wait is None:
                return ex.result()
            time.sleep(wait)

    capture = _sync(Calls.capture)
    remember = _sync(Calls.remember)
    messages = _sync(Calls.messages)
    atoms = _sync(Calls.atoms)
    persona = _sync(Calls.persona)
    scenes = _sync(Calls.scenes)
    read_scene = _sync(Calls.read_scene)
    tenants = _sync(Calls.tenants)
    search = _sync(Calls.search)
    search_conversations = _sync(Calls.search_conversations)
    recall = _sync(Calls.recall)
    run_pending = _sync(Calls.run_pending)
    run_all = _sync(Calls.run_all)
    request_persona = _sync(Calls.request_persona)
    end_session = _sync(Calls.end_session)
    status = _sync(Calls.status)
    reindex = _sync(Calls.reindex)
    repair = _sync(Calls.repair)
    import_tdai = _sync(Calls.import_tdai)
    forget = _sync(Calls.forget)
    pin_atom = _sync(Calls.pin_atom)
    set_atom_ttl = _sync(Calls.set_atom_ttl)
    sweep = _sync(Calls.sweep)
    rebuild_scenes = _sync(Calls.rebuild_scenes)
    export = _sync(Calls.export)
    import_export = _sync(Calls.import_export)
    get_message = _sync(Calls.get_message)
    delete_messages = _sync(Calls.delete_messages)
    get_atom = _sync(Calls.get_atom)
    update_atom = _sync(Calls.update_atom)
    delete_atoms = _sync(Calls.delete_atoms)
    write_scene = _sync(Calls.write_scene)
    delete_scene = _sync(Calls.delete_scene)
    write_persona = _sync(Calls.write_persona)
    counts = _sync(Calls.counts)
    before_prompt = _sync(Calls.before_prompt)
    turn_committed = _sync(Calls.turn_committed)
    import_seed = _sync(Calls.import_seed)
    import_sessions = _sync(Calls.import_sessions)
    health = _sync(Calls.health)

    def close(self, *, flush: bool = True) -> None:
        """Close the connections (the server keeps running; ``flush`` is the server's business)."""
        self._http.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncMemoryClient(_Base):
    """The async client; ``transport`` is for tests (e.g. ``httpx.MockTransport``)."""

    def __init__(
        self, url: str, *, transport: httpx.AsyncBaseTransport | None = None, **options: Any
    ) -> None:
        super().__init__(url, **options)
        self._http = httpx.AsyncClient(transport=transport, **self._options)

    async def _run(self, call: Call[R]) -> R:
        ex = Exchange(call, self._policy, self._breaker)
        while True:
            try:
                outcome: httpx.Response | httpx.TransportError = await self._http.request(**ex.request())
            except httpx.TransportError as exc:
                outcome = exc
            wait = ex.judge(outcome)
            if wait is None:
                return ex.result()
            await asyncio.sleep(wait)

    capture = _async(Calls.capture)
    remember = _async(Calls.remember)
    messages = _async(Calls.messages)
    atoms = _async(Calls.atoms)
    persona = _async(Calls.persona)
    scenes = _async(Calls.scenes)
    read_scene = _async(Calls.read_scene)
    tenants = _async(Calls.tenants)
    search = _async(Calls.search)
    search_conversations = _async(Calls.search_conversations)
    recall = _async(Calls.recall)
    run_pending = _async(Calls.run_pending)
    run_all = _async(Calls.run_all)
    request_persona = _async(Calls.request_persona)
    end_session = _async(Calls.end_session)
    status = _async(Calls.status)
    reindex = _async(Calls.reindex)
    repair = _async(Calls.repair)
    import_tdai = _async(Calls.import_tdai)
    forget = _async(Calls.forget)
    pin_atom = _async(Calls.pin_atom)
    set_atom_ttl = _async(Calls.set_atom_ttl)
    sweep = _async(Calls.sweep)
    rebuild_scenes = _async(Calls.rebuild_scenes)
    export = _async(Calls.export)
    import_export = _async(Calls.import_export)
    get_message = _async(Calls.get_message)
    delete_messages = _async(Calls.delete_messages)
    get_atom = _async(Calls.get_atom)
    update_atom = _async(Calls.update_atom)
    delete_atoms = _async(Calls.delete_atoms)
    write_scene = _async(Calls.write_scene)
    delete_scene = _async(Calls.delete_scene)
    write_persona = _async(Calls.write_persona)
    counts = _async(Calls.counts)
    before_prompt = _async(Calls.before_prompt)
    turn_committed = _async(Calls.turn_committed)
    import_seed = _async(Calls.import_seed)
    import_sessions = _async(Calls.import_sessions)
    health = _async(Calls.health)

    async def close(self, *, flush: bool = True) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
