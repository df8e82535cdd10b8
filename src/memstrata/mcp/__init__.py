"""The MCP server (``memstrata mcp``, and ``/mcp`` in the gateway). Needs the ``server`` extra:
``pip install 'memstrata[server]'``."""

from __future__ import annotations

from types import ModuleType

from memstrata.errors import MissingExtraError


def load() -> ModuleType:
    """``memstrata.mcp.server``, or a ``MissingExtraError`` naming the extra to install."""
    try:
        from memstrata.mcp import server
    except ImportError as exc:
        if (exc.name or "").split(".")[0] in {"mcp", "pydantic", "anyio", "starlette"}:
            raise MissingExtraError("mcp", "server", "the MCP server") from exc
        raise
    return server
