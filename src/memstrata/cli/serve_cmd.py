"""``memstrata serve``: the HTTP gateway (native API, TDAM-compatible routes, MCP at /mcp).

The server owns its data directory: its lifespan opens the memory as the directory's writer, runs
the pipeline in the background, and on SIGTERM (or Ctrl-C) stops taking requests, then drains the
L1 work it captured before exiting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from memstrata.cli.common import DataDir, data_dir, err_console, fail_cleanly
from memstrata.settings import Settings, load_settings


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def serve(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option("--host", help="Address to bind (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port (default 8420).")] = None,
    data_dir_: DataDir = None,
) -> None:
    """Serve a data directory over HTTP (and MCP at /mcp) until stopped."""
    with fail_cleanly():
        from memstrata.gateway import load

        gateway = load()
        import uvicorn

        settings = load_settings(data_dir(ctx, data_dir_))
        bind, listen = host or settings.server.host, port if port is not None else settings.server.port
        gateway.check_binding(bind, settings)
        app = gateway.create_app(settings, _opener(settings, f"http://{bind}:{listen}"), host=bind)
        config = uvicorn.Config(
            app, host=bind, port=listen, lifespan="on", access_log=False, log_level="info"
        )
        server = uvicorn.Server(config)
        gateway.install_redaction(settings)
        err_console.print(f"memstrata serving {settings.home} on http://{bind}:{listen} (MCP at /mcp)")
        server.run()


def _opener(settings: Settings, url: str) -> Any:
    async def open_memory() -> Any:
        from memstrata.memory import AsyncMemory

        # The directory's writer; its holder record names this server, so a CLI command that
        # finds the directory locked is told to go through it (--url).
        return await AsyncMemory.open(Path(settings.home), background=True, advertise_url=url)

    return open_memory
