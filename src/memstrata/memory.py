"""The facade: every interface (library, CLI, gateway, MCP) calls these methods.

``AsyncMemory`` is the one public surface, put together from the topic classes of
``memstrata.facade``; ``memstrata.sync.Memory`` runs the same methods for blocking code. Opening is
done by the composition root (``wiring.assemble``), which hands the facade its parts; the facade
holds no backend-specific code. Store calls are short and run in worker threads."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

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
    ) -> AsyncMemory:
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
            return cast("AsyncMemory", connect(str(path_or_url), settings, asynchronous=True))
        home = path_or_url if path_or_url and "://" not in str(path_or_url) else None
        s = load_settings(home, **settings)
        parts = await asyncio.to_thread(
            assemble,
            s,
            path_or_url,
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

    def start_background(self) -> None:
        """Run the pipeline in a background task of the running loop until ``close``."""
        self._writable("run the pipeline")
        if self._background is None:
            self._background = asyncio.get_running_loop().create_task(self._pipeline.serve())

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
        if not self.read_only:
            await self._pipeline.warm(everything=True)
        if flush and self._scheduler.touched:
            await self._scheduler.flush_touched(within)
        await asyncio.to_thread(self._store.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def is_url(location: str | Path | None) -> bool:
    return isinstance(location, str) and location.startswith(("http://", "https://"))


def connect(url: str, settings: dict[str, Any], *, asynchronous: bool) -> Any:
    """The HTTP client of a server; its API key is ``api_key=`` or ``$MEMSTRATA_API_KEY``."""
    from memstrata.client import AsyncMemoryClient, MemoryClient

    key = load_settings(None, **{k: v for k, v in settings.items() if k == "api_key"}).api_key
    secret = key.get_secret_value() if key is not None else None
    return AsyncMemoryClient(url, api_key=secret) if asynchronous else MemoryClient(url, api_key=secret)
