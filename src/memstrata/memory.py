"""The facade: every interface (library, CLI, gateway, MCP) calls these methods.

``AsyncMemory`` is the one public surface, put together from the topic classes of
``memstrata.facade``; ``memstrata.sync.Memory`` runs the same methods for blocking code. Opening is
done by the composition root (``wiring.assemble``), which hands the facade its parts; the facade
holds no backend-specific code. Store calls are short and run in worker threads."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from memstrata.errors import ConfigError
from memstrata.facade.capture import CaptureMethods
from memstrata.facade.edits.methods import EditMethods
from memstrata.facade.exporting import ExportMethods
from memstrata.facade.forgetting import ForgetMethods
from memstrata.facade.imports import ImportMethods
from memstrata.facade.keys import KeyMethods
from memstrata.facade.pipeline import PipelineMethods
from memstrata.facade.reads import ReadMethods
from memstrata.facade.remember import RememberMethods
from memstrata.facade.search import SearchMethods
from memstrata.facade.turns import TurnMethods
from memstrata.ports import ChatModel, Clock, Embedder, EmbedderChoice
from memstrata.settings import load_settings
from memstrata.wiring import assemble

if TYPE_CHECKING:
    from memstrata.client import AsyncMemoryClient, MemoryClient


class AsyncMemory(
    CaptureMethods,
    RememberMethods,
    ReadMethods,
    EditMethods,
    SearchMethods,
    TurnMethods,
    PipelineMethods,
    ForgetMethods,
    ImportMethods,
    ExportMethods,
    KeyMethods,
):
    """Long-term memory for one data directory (or database). Use ``await AsyncMemory.open(...)``."""

    # A path (or nothing: the default data directory) opens memory here; a string may also be a
    # server's URL, which gives its HTTP client: both satisfy ``MemoryApi``.
    @overload
    @classmethod
    async def open(
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
    ) -> AsyncMemory: ...
    @overload
    @classmethod
    async def open(
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
    ) -> AsyncMemory | AsyncMemoryClient: ...
    @classmethod
    async def open(
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
    ) -> AsyncMemory | AsyncMemoryClient:
        """Open memory in a data directory (default ``~/.memstrata`` or ``$MEMSTRATA_HOME``), in a
        PostgreSQL database (a ``postgresql://`` URL, or the ``store.url`` setting when no location
        is given; any number of processes may share one), or the memory of a ``memstrata serve``
        at an ``http(s)://`` URL (an ``AsyncMemoryClient``).

        One process writes a data directory at a time: a second writer gets
        ``DirectoryLockedError`` naming the holder, or waits up to ``wait`` seconds.
        ``read_only=True`` takes no lock, never writes and never runs the pipeline.
        ``settings`` override file and environment (e.g. ``pipeline={"engine": "llm"}``);
        ``background=True`` runs the pipeline until ``close``; ``embedder=None`` turns vectors
        off; a ``chat_model`` selects the LLM engine with that model.
        """
        if is_url(path_or_url):
            # A server: the HTTP client has these methods too (a parity test keeps them so).
            return connect(str(path_or_url), settings, asynchronous=True)
        where = (read_only, wait, advertise_url, clock, embedder, chat_model)
        return await cls._open_here(path_or_url, background, *where, settings)

    @classmethod
    async def _open_here(
        cls,
        location: str | Path | None,
        background: bool,
        read_only: bool,
        wait: float,
        advertise_url: str | None,
        clock: Clock | None,
        embedder: Embedder | EmbedderChoice | str | None,
        chat_model: ChatModel | None,
        settings: dict[str, Any],
    ) -> AsyncMemory:
        """``open`` of a data directory or a database (not a server's URL)."""
        home = location if location and "://" not in str(location) else None
        s = load_settings(home, **settings)
        parts = await asyncio.to_thread(
            assemble,
            s,
            location,
            read_only=read_only,
            wait=wait,
            advertise_url=advertise_url,
            clock=clock,
            embedder=embedder,
            chat=chat_model,
        )
        mem = cls(parts, s)
        if background:
            mem.start_background()
        return mem

    @classmethod
    async def open_shared(
        cls,
        location: str | Path,
        *,
        worker: bool,
        owner: int | None = None,
        advertise_url: str | None = None,
        wait: float = 0.0,
        poll: float | None = None,
        **settings: Any,
    ) -> AsyncMemory:
        """A memory that shares its store with other processes. ``worker=False``: a server's,
        which answers requests and runs no pipeline (on a data directory it is the owner, and
        shares it with its workers). ``worker=True``: a worker's (``memstrata worker``), which
        runs the pipeline in the background until ``close``; ``owner`` is the pid of the server
        whose data directory it joins (waiting up to ``wait`` seconds for it to open it), and
        ``poll`` how often (seconds) its loop looks for work no capture of its own announced."""
        s = load_settings(location if "://" not in str(location) else None, **settings)
        parts = await asyncio.to_thread(
            assemble, s, location, wait=wait, advertise_url=advertise_url, shared=True, joins=owner
        )
        mem = cls(parts, s, pipeline_here=worker)
        mem._owns_captures = not worker
        if poll is not None:
            mem._pipeline.idle_poll = poll
        if worker:
            mem.start_background()
        return mem

    def start_background(self) -> None:
        """Run the pipeline in a background task of the running loop until ``close``."""
        self._writable("run the pipeline")
        if not self._pipeline_here:
            raise ConfigError("this memory's pipeline runs in its workers (memstrata worker)")
        if self._background is None:
            self._background = asyncio.get_running_loop().create_task(self._pipeline.serve())

    def check_background(self) -> None:
        """Raise what ended the background loop, if it ended (it only ends by failing)."""
        task = self._background
        if task is not None and task.done() and not task.cancelled():
            task.result()
            raise RuntimeError("the background pipeline loop ended")

    async def close(self, *, flush: bool = True, within: float | None = None) -> None:
        """Stop the background loop, run L1 on what this process captured (unless ``flush=False``:
        it then waits, durably, for the next process), and close the store. ``within`` bounds
        that run (seconds): windows that do not fit are left to the durable backlog (the next
        process extracts them), and how many messages were left is logged."""
        if self._background is not None:
            self._background.cancel()
            try:
                await self._background
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # close itself was cancelled (a caller's timeout), not just the loop
            self._background = None
        if self._warming is not None:
            await self._warming
        if not self.read_only:
            await self._pipeline.warm(everything=True)
        if flush and self._pipeline_here and (self._scheduler.touched or not self._owns_captures):
            # A worker captures nothing itself: it drains every session's backlog.
            await self._scheduler.flush_touched(within, every=not self._owns_captures)
        await asyncio.to_thread(self._store.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def is_url(location: str | Path | None) -> bool:
    return isinstance(location, str) and location.startswith(("http://", "https://"))


@overload
def connect(url: str, settings: dict[str, Any], *, asynchronous: Literal[True]) -> AsyncMemoryClient: ...
@overload
def connect(url: str, settings: dict[str, Any], *, asynchronous: Literal[False]) -> MemoryClient: ...
def connect(url: str, settings: dict[str, Any], *, asynchronous: bool) -> AsyncMemoryClient | MemoryClient:
    """The HTTP client of a server; its API key is ``api_key=`` or ``$MEMSTRATA_API_KEY``."""
    from memstrata.client import AsyncMemoryClient, MemoryClient

    key = load_settings(None, **{k: v for k, v in settings.items() if k == "api_key"}).api_key
    secret = key.get_secret_value() if key is not None else None
    return AsyncMemoryClient(url, api_key=secret) if asynchronous else MemoryClient(url, api_key=secret)
