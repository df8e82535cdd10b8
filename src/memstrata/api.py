"""The public entry points: ``AsyncMemory.open`` and the blocking ``Memory`` over it.

``Memory`` runs an ``AsyncMemory`` on a private event loop in a daemon thread; each method is the
async one, run to completion. The methods are generated from ``AsyncMemory`` (never hand-copied),
and a parity test keeps the two surfaces identical.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from memstrata import memory
from memstrata.ports import ChatModel, Clock, Embedder
from memstrata.settings import load_settings
from memstrata.wiring import build

P = ParamSpec("P")
R = TypeVar("R")


class AsyncMemory(memory.AsyncMemory):
    @classmethod
    async def open(
        cls,
        path_or_url: str | Path | None = None,
        *,
        background: bool = False,
        clock: Clock | None = None,
        embedder: Embedder | str | None = "settings",
        chat_model: ChatModel | None = None,
        **settings: Any,
    ) -> AsyncMemory:
        """Open memory in a data directory (default ``~/.memstrata`` or ``$MEMSTRATA_HOME``).

        ``settings`` override file and environment (e.g. ``pipeline={"engine": "llm"}``);
        ``background=True`` runs the pipeline scheduler until ``close``. ``embedder=None`` turns
        vectors off; a ``chat_model`` selects the LLM engine with that model.
        """
        if _is_url(path_or_url):
            # A server: the HTTP client has the same methods (a parity test keeps them so).
            return cast("AsyncMemory", _client(str(path_or_url), settings, asynchronous=True))
        s = load_settings(path_or_url if path_or_url and "://" not in str(path_or_url) else None, **settings)
        parts = await asyncio.to_thread(
            build, s, path_or_url, clock=clock, embedder=embedder, chat=chat_model
        )
        mem = cls(
            parts.store,
            s,
            parts.clock,
            parts.embedder,
            parts.extractor,
            parts.deduplicator,
            upper=parts.upper,
        )
        if background:
            mem.start_background()
        return mem


def _is_url(location: str | Path | None) -> bool:
    return isinstance(location, str) and location.startswith(("http://", "https://"))


def _client(url: str, settings: dict[str, Any], *, asynchronous: bool) -> Any:
    """The HTTP client of a server; the API key comes from ``api_key=`` or ``MEMSTRATA_API_KEY``."""
    from memstrata.client import AsyncMemoryClient, MemoryClient

    key = load_settings(None, **{k: v for k, v in settings.items() if k == "api_key"}).api_key
    secret = key.get_secret_value() if key is not None else None
    return AsyncMemoryClient(url, api_key=secret) if asynchronous else MemoryClient(url, api_key=secret)


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
    fn: Callable[Concatenate[memory.AsyncMemory, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[Memory, P], R]:
    def call(self: Memory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._portal.call(fn(self._async, *args, **kwargs))

    functools.update_wrapper(call, fn)
    return call


class Memory:
    """Blocking memory for synchronous code; same methods as ``AsyncMemory``."""

    def __init__(self, inner: memory.AsyncMemory, portal: _Portal) -> None:
        self._async = inner
        self._portal = portal
        self._closed = False

    @classmethod
    def open(
        cls,
        path_or_url: str | Path | None = None,
        *,
        background: bool = False,
        clock: Clock | None = None,
        embedder: Embedder | str | None = "settings",
        chat_model: ChatModel | None = None,
        **settings: Any,
    ) -> Memory:
        """See ``AsyncMemory.open``; with ``background=True`` the pipeline runs in a thread.
        An ``http://`` or ``https://`` URL returns a ``MemoryClient`` of that server instead."""
        if _is_url(path_or_url):
            return cast("Memory", _client(str(path_or_url), settings, asynchronous=False))
        portal = _Portal()
        try:
            inner = portal.call(
                AsyncMemory.open(
                    path_or_url,
                    background=background,
                    clock=clock,
                    embedder=embedder,
                    chat_model=chat_model,
                    **settings,
                )
            )
        except BaseException:
            portal.stop()
            raise
        return cls(inner, portal)

    @property
    def settings(self) -> Any:
        return self._async.settings

    def close(self, *, flush: bool = True) -> None:
        """Stop the pipeline (running L1 on what this process captured unless ``flush=False``)
        and close the store. Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        try:
            self._portal.call(self._async.close(flush=flush))
        finally:
            self._portal.stop()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    capture = _blocking(memory.AsyncMemory.capture)
    messages = _blocking(memory.AsyncMemory.messages)
    atoms = _blocking(memory.AsyncMemory.atoms)
    search = _blocking(memory.AsyncMemory.search)
    recall = _blocking(memory.AsyncMemory.recall)
    search_conversations = _blocking(memory.AsyncMemory.search_conversations)
    run_pending = _blocking(memory.AsyncMemory.run_pending)
    run_all = _blocking(memory.AsyncMemory.run_all)
    request_persona = _blocking(memory.AsyncMemory.request_persona)
    persona = _blocking(memory.AsyncMemory.persona)
    scenes = _blocking(memory.AsyncMemory.scenes)
    read_scene = _blocking(memory.AsyncMemory.read_scene)
    tenants = _blocking(memory.AsyncMemory.tenants)
    end_session = _blocking(memory.AsyncMemory.end_session)
    status = _blocking(memory.AsyncMemory.status)
    reindex = _blocking(memory.AsyncMemory.reindex)
    import_tdai = _blocking(memory.AsyncMemory.import_tdai)
    get_message = _blocking(memory.AsyncMemory.get_message)
    delete_messages = _blocking(memory.AsyncMemory.delete_messages)
    get_atom = _blocking(memory.AsyncMemory.get_atom)
    update_atom = _blocking(memory.AsyncMemory.update_atom)
    delete_atoms = _blocking(memory.AsyncMemory.delete_atoms)
    write_scene = _blocking(memory.AsyncMemory.write_scene)
    delete_scene = _blocking(memory.AsyncMemory.delete_scene)
    write_persona = _blocking(memory.AsyncMemory.write_persona)
    counts = _blocking(memory.AsyncMemory.counts)
    before_prompt = _blocking(memory.AsyncMemory.before_prompt)
    turn_committed = _blocking(memory.AsyncMemory.turn_committed)
    import_seed = _blocking(memory.AsyncMemory.import_seed)
