"""How an adapter holds a memory, whichever it was given: the library's ``Memory`` /
``AsyncMemory`` or the HTTP client's ``MemoryClient`` / ``AsyncMemoryClient`` answer the same
methods with the same parameters, blocking or awaitable. Adapter logic is written once, async,
against a ``MemoryApi`` (``memstrata.operations``: every call is checked by mypy):

- ``awaiting(mem)``, for a framework's async entry point: an async memory as it is, a blocking
  one with each call run in a worker thread;
- ``blocking(mem)``, for its sync entry point: a blocking memory whose calls run directly, so
  logic awaiting only it never suspends and ``drive`` runs it to the end without an event loop
  (an async memory there would need the caller's event loop: ``ConfigError``)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from memstrata import operations as ops
from memstrata.errors import ConfigError
from memstrata.operations import BlockingMemoryApi, MemoryApi
from memstrata.operations.base import describe

P = ParamSpec("P")
R = TypeVar("R")
Held = MemoryApi | BlockingMemoryApi  # what an adapter is given


def is_async(mem: Held) -> bool:
    """Whether ``mem``'s methods are coroutines (``AsyncMemory``, ``AsyncMemoryClient``)."""
    return inspect.iscoroutinefunction(mem.search)


def awaiting(mem: Held) -> MemoryApi:
    """``mem`` for async code: an async memory as it is, a blocking one in worker threads."""
    if is_async(mem):
        return cast(MemoryApi, mem)
    return _Adapted(cast(BlockingMemoryApi, mem), threaded=True)


def blocking(mem: Held) -> MemoryApi:
    """``mem`` for a sync entry point (run the logic with ``drive``); it must be blocking."""
    if is_async(mem):
        raise ConfigError(
            f"{type(mem).__name__} is async: use the adapter's async method, or open the memory "
            "with Memory.open for blocking code"
        )
    return _Adapted(cast(BlockingMemoryApi, mem), threaded=False)


def drive(coro: Coroutine[Any, Any, R]) -> R:
    """Run a coroutine that awaits only a ``blocking`` memory, in the calling thread. Adapter
    logic is written once, async; a framework's sync entry point runs it through here, so it
    works inside a running event loop too (``asyncio.run`` would not)."""
    try:
        coro.send(None)
    except StopIteration as done:
        return cast(R, done.value)
    coro.close()
    raise RuntimeError("adapter logic suspended on a blocking memory (an adapter bug)")


def _adapted(
    spec: Callable[P, ops.Operation[R]],
) -> Callable[Concatenate[_Adapted, P], Coroutine[Any, Any, R]]:
    """The async method of ``spec``'s operation over a blocking memory's method of that name."""
    name = cast(type[ops.Operation[R]], spec).NAME

    async def method(self: _Adapted, /, *args: P.args, **kwargs: P.kwargs) -> R:
        call: Callable[..., R] = getattr(self._mem, name)
        if self._threaded:
            return await asyncio.to_thread(call, *args, **kwargs)
        return call(*args, **kwargs)

    describe(method, spec)  # type: ignore[arg-type]
    return method


class _Adapted:
    """A blocking memory as a ``MemoryApi``: each call runs in a worker thread (``threaded``) or
    directly (for ``drive``)."""

    def __init__(self, mem: BlockingMemoryApi, *, threaded: bool) -> None:
        self._mem = mem
        self._threaded = threaded

    async def close(self, *, flush: bool = True, within: float | None = None) -> None:
        if self._threaded:
            await asyncio.to_thread(self._mem.close, flush=flush, within=within)
        else:
            self._mem.close(flush=flush, within=within)

    capture = _adapted(ops.Capture)
    messages = _adapted(ops.Messages)
    atoms = _adapted(ops.Atoms)
    persona = _adapted(ops.Persona)
    scenes = _adapted(ops.Scenes)
    read_scene = _adapted(ops.ReadScene)
    scene_backups = _adapted(ops.SceneBackups)
    read_scene_backup = _adapted(ops.ReadSceneBackup)
    persona_backups = _adapted(ops.PersonaBackups)
    read_persona_backup = _adapted(ops.ReadPersonaBackup)
    tenants = _adapted(ops.Tenants)
    get_message = _adapted(ops.GetMessage)
    delete_messages = _adapted(ops.DeleteMessages)
    get_atom = _adapted(ops.GetAtom)
    update_atom = _adapted(ops.UpdateAtom)
    delete_atoms = _adapted(ops.DeleteAtoms)
    write_scene = _adapted(ops.WriteScene)
    delete_scene = _adapted(ops.DeleteScene)
    write_persona = _adapted(ops.WritePersona)
    counts = _adapted(ops.Counts)
    search = _adapted(ops.Search)
    search_conversations = _adapted(ops.SearchConversations)
    remember = _adapted(ops.Remember)
    recall = _adapted(ops.Recall)
    before_prompt = _adapted(ops.BeforePrompt)
    turn_committed = _adapted(ops.TurnCommitted)
    run_pending = _adapted(ops.RunPending)
    run_all = _adapted(ops.RunAll)
    request_persona = _adapted(ops.RequestPersona)
    end_session = _adapted(ops.EndSession)
    status = _adapted(ops.Status)
    repair = _adapted(ops.Repair)
    reindex = _adapted(ops.Reindex)
    forget = _adapted(ops.Forget)
    pin_atom = _adapted(ops.PinAtom)
    set_atom_ttl = _adapted(ops.SetAtomTtl)
    sweep = _adapted(ops.Sweep)
    rebuild_scenes = _adapted(ops.RebuildScenes)
    import_sessions = _adapted(ops.ImportSessions)
    import_seed = _adapted(ops.ImportSeed)
    import_tdai = _adapted(ops.ImportTdai)
    export = _adapted(ops.Export)
    import_export = _adapted(ops.ImportExport)
    create_key = _adapted(ops.CreateKey)
    keys = _adapted(ops.Keys)
    revoke_key = _adapted(ops.RevokeKey)
    verify_key = _adapted(ops.VerifyKey)
