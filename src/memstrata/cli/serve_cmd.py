"""``memstrata serve``: the HTTP gateway (native API, TDAM-compatible routes, MCP at /mcp).

The server answers requests and nothing else: its lifespan opens the memory as the data
directory's owner (or on the PostgreSQL database), and ``--workers N`` worker processes
(``memstrata.worker``, at a lower CPU priority) run the pipeline beside it, meeting it only through
the store. On SIGTERM (or Ctrl-C) it stops taking requests, finishes those in flight within
``server.shutdown_grace_seconds``, then stops its workers (each rolls back the window it was on;
the durable backlog keeps the rest for the next start) and exits 0 (``gateway.serving``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer

from memstrata.cli.common import DataDir, data_dir, err_console, fail_cleanly
from memstrata.settings import load_settings

WORKERS_READY_SECONDS = 60.0  # serve listens once its workers have opened the store, or this long


def redact(url: str) -> str:
    """A store URL without its password."""
    head, at, tail = url.rpartition("@")
    if not at or ":" not in head.split("://", 1)[-1]:
        return url
    scheme, _, user = head.partition("://")
    return f"{scheme}://{user.split(':', 1)[0]}:***@{tail}"


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def serve(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option("--host", help="Address to bind (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port (default 8420).")] = None,
    data_dir_: DataDir = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=0,
            help="Worker processes to start for the pipeline (default 1; 0 when `memstrata worker` "
            "runs elsewhere).",
        ),
    ] = None,
) -> None:
    """Serve a data directory (or, with --store, a PostgreSQL database) over HTTP (and MCP at /mcp)
    until stopped."""
    with fail_cleanly():
        from memstrata.gateway import load

        gateway = load()
        where = data_dir(ctx, data_dir_)  # a data directory, or a store URL (--store)
        settings = load_settings(where if isinstance(where, Path) else None)
        location = where or settings.store.url or settings.home
        bind, listen = host or settings.server.host, port if port is not None else settings.server.port
        gateway.check_binding(bind, settings)
        postgres = isinstance(location, str) and location.startswith(("postgres://", "postgresql://"))
        from memstrata.worker import Workers

        count = settings.server.workers if workers is None else workers
        pool = Workers(location, count, settings.server.worker_nice)
        app = gateway.create_app(
            settings,
            # A server's query passes get a process of their own unless settings say otherwise.
            _opener(location, f"http://{bind}:{listen}", settings.embedding.query_process is not False, pool),
            host=bind,
            store="postgresql" if postgres else "sqlite",
        )
        from memstrata.gateway import serving

        server = serving.Server(
            serving.config(app, settings, host=bind, port=listen, log_level="info"),
            settings.server.shutdown_grace_seconds,
            pool.signal,
        )
        gateway.install_redaction(settings)
        shown = redact(location) if isinstance(location, str) else location
        err_console.print(
            f"memstrata serving {shown} on http://{bind}:{listen} (MCP at /mcp), {count} worker(s)"
        )
        pool.start()  # each waits for this process to open the store
        try:
            serving.run(server)
        finally:
            pool.stop(settings.server.shutdown_grace_seconds)


def _opener(location: Path | str, url: str, query_process: bool, pool: Any) -> Any:
    async def open_memory() -> Any:
        from memstrata.memory import AsyncMemory

        # A data directory's owner: its holder record names this server, so a CLI command that
        # finds the directory locked is told to go through it (--url), and its workers join it.
        # On PostgreSQL any number of servers and workers share the database.
        memory = await AsyncMemory.open_shared(
            location, worker=False, advertise_url=url, embedding={"query_process": query_process}
        )
        await asyncio.to_thread(pool.ready, WORKERS_READY_SECONDS)  # they join the store just opened
        return memory

    return open_memory
