"""``Memory``: the blocking twin of ``AsyncMemory``, for synchronous code.

It runs an ``AsyncMemory`` on a private event loop in a daemon thread; each method is the async
one, run to completion. The methods are generated from ``AsyncMemory`` (never hand-copied), and a
parity test keeps the two surfaces identical.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, overload

from memstrata.memory import AsyncMemory, connect, is_url
from memstrata.ports import ChatModel, Clock, Embedder, EmbedderChoice
from memstrata.settings import Settings

if TYPE_CHECKING:
    from memstrata.client import MemoryClient

P = ParamSpec("P")
R = TypeVar("R")


class _Portal:
    """An event loop in a daemon thread, to run coroutines from synchronous code."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="memstrata-loop", daemon=True)
        self._thread.start()

    def call(self, coro: Coroutine[Any, Any, R]) -> R:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


def _blocking(
    fn: Callable[Concatenate[AsyncMemory, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[Memory, P], R]:
    def call(self: Memory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._portal.call(fn(self._async, *args, **kwargs))

    functools.update_wrapper(call, fn)
    return call


class Memory:
    """Blocking memory for synchronous code; same methods as ``AsyncMemory``."""

    def __init__(self, inner: AsyncMemory, portal: _Portal) -> None:
        self._async = inner
        self._portal = portal
        self._closed = False

    # A path (or nothing: the default data directory) opens memory here; a string may also be a
    # server's URL, which gives its HTTP client: both satisfy ``BlockingMemoryApi``.
    @overload
    @classmethod
    def open(
        cls,
        path_or_url: Path | None = None,
        *,
        background: bool = False,
        read_only: bool = False,
        wait: float = 0.0,
        advertise_url: str | None = None,
        clock: Clock | None = None,
        embedder: Embedder | EmbedderChoice | str | None = "settings",
        chat_model: ChatModel | None = None,
        **settings: Any,
    ) -> Memory: ...
    @overload
    @classmethod
    def open(
        cls,
        path_or_url: str,
        *,
        background: bool = False,
        read_only: bool = False,
        wait: float = 0.0,
        advertise_url: str | None = None,
        clock: Clock | None = None,
        embedder: Embedder | EmbedderChoice | str | None = "settings",
        chat_model: ChatModel | None = None,
        **settings: Any,
    ) -> Memory | MemoryClient: ...
    @classmethod
    def open(
        cls,
        path_or_url: str | Path | None = None,
        *,
        background: bool = False,
        read_only: bool = False,
        wait: float = 0.0,
        advertise_url: str | None = None,
        clock: Clock | None = None,
        embedder: Embedder | EmbedderChoice | str | None = "settings",
        chat_model: ChatModel | None = None,
        **settings: Any,
    ) -> Memory | MemoryClient:
        """See ``AsyncMemory.open``; with ``background=True`` the pipeline runs in a thread.
        An ``http(s)://`` URL returns a ``MemoryClient`` of that server (same methods)."""
        if is_url(path_or_url):
            return connect(str(path_or_url), settings, asynchronous=False)
        portal = _Portal()
        try:
            where = (read_only, wait, advertise_url, clock, embedder, chat_model)
            inner = portal.call(AsyncMemory._open_here(path_or_url, background, *where, settings))
        except BaseException:
            portal.stop()
            raise
        return cls(inner, portal)

    @property
    def settings(self) -> Settings:
        return self._async.settings

    @property
    def read_only(self) -> bool:
        return self._async.read_only

    def close(self, *, flush: bool = True, within: float | None = None) -> None:
        """Stop the pipeline (running L1 on what this process captured unless ``flush=False``,
        for at most ``within`` seconds) and close the store. Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        try:
            self._portal.call(self._async.close(flush=flush, within=within))
        finally:
            self._portal.stop()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    capture = _blocking(AsyncMemory.capture)
    remember = _blocking(AsyncMemory.remember)
    messages = _blocking(AsyncMemory.messages)
    atoms = _blocking(AsyncMemory.atoms)
    persona = _blocking(AsyncMemory.persona)
    scenes = _blocking(AsyncMemory.scenes)
    read_scene = _blocking(AsyncMemory.read_scene)
    scene_backups = _blocking(AsyncMemory.scene_backups)
    read_scene_backup = _blocking(AsyncMemory.read_scene_backup)
    persona_backups = _blocking(AsyncMemory.persona_backups)
    read_persona_backup = _blocking(AsyncMemory.read_persona_backup)
    tenants = _blocking(AsyncMemory.tenants)
    search = _blocking(AsyncMemory.search)
    search_conversations = _blocking(AsyncMemory.search_conversations)
    recall = _blocking(AsyncMemory.recall)
    run_pending = _blocking(AsyncMemory.run_pending)
    run_all = _blocking(AsyncMemory.run_all)
    request_persona = _blocking(AsyncMemory.request_persona)
    end_session = _blocking(AsyncMemory.end_session)
    status = _blocking(AsyncMemory.status)
    reindex = _blocking(AsyncMemory.reindex)
    repair = _blocking(AsyncMemory.repair)
    import_sessions = _blocking(AsyncMemory.import_sessions)
    import_tdai = _blocking(AsyncMemory.import_tdai)
    get_message = _blocking(AsyncMemory.get_message)
    delete_messages = _blocking(AsyncMemory.delete_messages)
    get_atom = _blocking(AsyncMemory.get_atom)
    update_atom = _blocking(AsyncMemory.update_atom)
    delete_atoms = _blocking(AsyncMemory.delete_atoms)
    write_scene = _blocking(AsyncMemory.write_scene)
    delete_scene = _blocking(AsyncMemory.delete_scene)
    write_persona = _blocking(AsyncMemory.write_persona)
    counts = _blocking(AsyncMemory.counts)
    before_prompt = _blocking(AsyncMemory.before_prompt)
    turn_committed = _blocking(AsyncMemory.turn_committed)
    import_seed = _blocking(AsyncMemory.import_seed)
    forget = _blocking(AsyncMemory.forget)
    pin_atom = _blocking(AsyncMemory.pin_atom)
    set_atom_ttl = _blocking(AsyncMemory.set_atom_ttl)
    sweep = _blocking(AsyncMemory.sweep)
    rebuild_scenes = _blocking(AsyncMemory.rebuild_scenes)
    export = _blocking(AsyncMemory.export)
    import_export = _blocking(AsyncMemory.import_export)
    create_key = _blocking(AsyncMemory.create_key)
    keys = _blocking(AsyncMemory.keys)
    revoke_key = _blocking(AsyncMemory.revoke_key)
    verify_key = _blocking(AsyncMemory.verify_key)
