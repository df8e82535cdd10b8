"""``memstrata mcp``: the MCP server over stdio, for MCP clients (Claude Desktop, Cursor, ...).

It opens the data directory itself, or, with ``--url``, talks to a running ``memstrata serve``
(the way to share one directory between an HTTP server and MCP clients).
"""

from __future__ import annotations

import anyio
import typer

from memstrata.cli.common import Agent, DataDir, User, data_dir, fail_cleanly, server_url


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)


def mcp(
    ctx: typer.Context, user: User = "default", agent: Agent = "default", data_dir_: DataDir = None
) -> None:
    """Serve the memory tools over MCP on stdin/stdout for one tenant."""
    with fail_cleanly():
        from memstrata.mcp import load

        module = load()
        url, home = server_url(ctx), data_dir(ctx, data_dir_)

        async def main() -> None:
            from memstrata.memory import AsyncMemory
            from memstrata.operations import MemoryApi

            mem: MemoryApi = await (AsyncMemory.open(url) if url else AsyncMemory.open(home, background=True))
            try:
                await module.build_server(lambda: mem, user_id=user, agent_id=agent).run_stdio_async()
            finally:
                await mem.close()

        anyio.run(main)
