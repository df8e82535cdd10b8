"""``memstrata serve``: the HTTP gateway (native API, TDAM-compatible routes, MCP at /mcp).

The server owns its data directory: its lifespan opens the memory as the directory's writer, runs
the pipeline in the background, and on SIGTERM (or Ctrl-C) stops taking requests, then drains the
L1 work it captured for at most ``server.shutdown_grace_seconds`` in all (the rest stays in the
durable backlog) and exits 0 (``gateway.serving``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from memstrata.cli.common import DataDir, data_dir, err_console, fail_cleanly
from memstrata.settings import load_settings


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
        app = gateway.create_app(
            settings,
            # A server's query passes get a process of their own unless settings say otherwise.
            _opener(location, f"http://{bind}:{listen}", settings.embedding.query_process is not False),
            host=bind,
            store="postgresql" if postgres else "sqlite",
        )
        from memstrata.gateway import serving

        server = serving.Server(
            serving.config(app, settings, host=bind, port=listen, log_level="info"),
            settings.server.shutdown_grace_seconds,
        )
        gateway.install_redaction(settings)
        shown = redact(location) if isinstance(location, str) else location
        err_console.print(f"memstrata serving {shown} on http://{bind}:{listen} (MCP at /mcp)")
        serving.run(server)


def _opener(location: Path | str, url: str, query_process: bool) -> Any:
    async def open_memory() -> Any:
        from memstrata.memory import AsyncMemory

        # A data directory's writer: its holder record names this server, so a CLI command that
        # finds the directory locked is told to go through it (--url). On PostgreSQL any number
        # of servers share the database (and its pipeline, through leases).
        return await AsyncMemory.open(
            location, background=True, advertise_url=url, embedding={"query_process": query_process}
        )

    return open_memory
