"""``MemoryClient`` (blocking) and ``AsyncMemoryClient``: the library's methods, over HTTP.

    with MemoryClient("http://127.0.0.1:8420", api_key="...") as mem:
        mem.capture([{"role": "user", "content": "I moved to Lisbon."}], session_key="chat-1")
        print(mem.recall("where do I live?").prepend_context)

Each method is generated from the operation's declaration in ``memstrata.operations``, as the
facade's is (same name, parameters, defaults, annotations and result type); the two classes differ
only in their transport. ``Memory.open("http://...")`` returns the
blocking one, ``AsyncMemory.open("http://...")`` the async one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from memstrata import operations as ops
from memstrata.client import calls
from memstrata.client.calls import Call, call_of
from memstrata.client.exchange import CircuitBreaker, Exchange, RetryPolicy
from memstrata.errors import ConfigError
from memstrata.operations.base import describe

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


def _sync(spec: Callable[P, ops.Operation[R]]) -> Callable[Concatenate[MemoryClient, P], R]:
    def method(self: MemoryClient, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._run(call_of(spec(*args, **kwargs)))

    describe(method, spec)  # type: ignore[arg-type]
    return method


def _async(
    spec: Callable[P, ops.Operation[R]],
) -> Callable[Concatenate[AsyncMemoryClient, P], Coroutine[Any, Any, R]]:
    async def method(self: AsyncMemoryClient, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._run(call_of(spec(*args, **kwargs)))

    describe(method, spec)  # type: ignore[arg-type]
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

    capture = _sync(ops.Capture)
    remember = _sync(ops.Remember)
    messages = _sync(ops.Messages)
    atoms = _sync(ops.Atoms)
    persona = _sync(ops.Persona)
    scenes = _sync(ops.Scenes)
    read_scene = _sync(ops.ReadScene)
    scene_backups = _sync(ops.SceneBackups)
    read_scene_backup = _sync(ops.ReadSceneBackup)
    persona_backups = _sync(ops.PersonaBackups)
    read_persona_backup = _sync(ops.ReadPersonaBackup)
    tenants = _sync(ops.Tenants)
    search = _sync(ops.Search)
    search_conversations = _sync(ops.SearchConversations)
    recall = _sync(ops.Recall)
    run_pending = _sync(ops.RunPending)
    run_all = _sync(ops.RunAll)
    request_persona = _sync(ops.RequestPersona)
    end_session = _sync(ops.EndSession)
    status = _sync(ops.Status)
    reindex = _sync(ops.Reindex)
    repair = _sync(ops.Repair)
    import_tdai = _sync(ops.ImportTdai)
    forget = _sync(ops.Forget)
    pin_atom = _sync(ops.PinAtom)
    set_atom_ttl = _sync(ops.SetAtomTtl)
    sweep = _sync(ops.Sweep)
    rebuild_scenes = _sync(ops.RebuildScenes)
    export = _sync(ops.Export)
    import_export = _sync(ops.ImportExport)
    get_message = _sync(ops.GetMessage)
    delete_messages = _sync(ops.DeleteMessages)
    get_atom = _sync(ops.GetAtom)
    update_atom = _sync(ops.UpdateAtom)
    delete_atoms = _sync(ops.DeleteAtoms)
    write_scene = _sync(ops.WriteScene)
    delete_scene = _sync(ops.DeleteScene)
    write_persona = _sync(ops.WritePersona)
    counts = _sync(ops.Counts)
    create_key = _sync(ops.CreateKey)
    keys = _sync(ops.Keys)
    revoke_key = _sync(ops.RevokeKey)
    verify_key = _sync(ops.VerifyKey)
    before_prompt = _sync(ops.BeforePrompt)
    turn_committed = _sync(ops.TurnCommitted)
    import_seed = _sync(ops.ImportSeed)
    import_sessions = _sync(ops.ImportSessions)

    def health(self) -> dict[str, Any]:
        """The server's health (not a facade method): version, store, embedder, pipeline lag."""
        return self._run(calls.health())

    def close(self, *, flush: bool = True, within: float | None = None) -> None:
        """Close the connections (the server keeps running; ``flush`` and ``within`` are the
        server's business)."""
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

    capture = _async(ops.Capture)
    remember = _async(ops.Remember)
    messages = _async(ops.Messages)
    atoms = _async(ops.Atoms)
    persona = _async(ops.Persona)
    scenes = _async(ops.Scenes)
    read_scene = _async(ops.ReadScene)
    scene_backups = _async(ops.SceneBackups)
    read_scene_backup = _async(ops.ReadSceneBackup)
    persona_backups = _async(ops.PersonaBackups)
    read_persona_backup = _async(ops.ReadPersonaBackup)
    tenants = _async(ops.Tenants)
    search = _async(ops.Search)
    search_conversations = _async(ops.SearchConversations)
    recall = _async(ops.Recall)
    run_pending = _async(ops.RunPending)
    run_all = _async(ops.RunAll)
    request_persona = _async(ops.RequestPersona)
    end_session = _async(ops.EndSession)
    status = _async(ops.Status)
    reindex = _async(ops.Reindex)
    repair = _async(ops.Repair)
    import_tdai = _async(ops.ImportTdai)
    forget = _async(ops.Forget)
    pin_atom = _async(ops.PinAtom)
    set_atom_ttl = _async(ops.SetAtomTtl)
    sweep = _async(ops.Sweep)
    rebuild_scenes = _async(ops.RebuildScenes)
    export = _async(ops.Export)
    import_export = _async(ops.ImportExport)
    get_message = _async(ops.GetMessage)
    delete_messages = _async(ops.DeleteMessages)
    get_atom = _async(ops.GetAtom)
    update_atom = _async(ops.UpdateAtom)
    delete_atoms = _async(ops.DeleteAtoms)
    write_scene = _async(ops.WriteScene)
    delete_scene = _async(ops.DeleteScene)
    write_persona = _async(ops.WritePersona)
    counts = _async(ops.Counts)
    create_key = _async(ops.CreateKey)
    keys = _async(ops.Keys)
    revoke_key = _async(ops.RevokeKey)
    verify_key = _async(ops.VerifyKey)
    before_prompt = _async(ops.BeforePrompt)
    turn_committed = _async(ops.TurnCommitted)
    import_seed = _async(ops.ImportSeed)
    import_sessions = _async(ops.ImportSessions)

    async def health(self) -> dict[str, Any]:
        """The server's health (not a facade method): version, store, embedder, pipeline lag."""
        return await self._run(calls.health())

    async def close(self, *, flush: bool = True, within: float | None = None) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
