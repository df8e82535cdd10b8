"""The HTTP gateway (``memstrata serve``): the native API under ``/v1``, TDAM-compatible routes,
and the MCP server at ``/mcp``. Needs the ``server`` extra: ``pip install 'memstrata[server]'``."""

from __future__ import annotations

from types import ModuleType

from memstrata.errors import MissingExtraError


def load() -> ModuleType:
    """``memstrata.gateway.app``, or a ``MissingExtraError`` naming the extra to install."""
    try:
        from memstrata.gateway import app
    except ImportError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing in {"fastapi", "uvicorn", "starlette", "mcp", "jinja2", "multipart", "python_multipart"}:
            raise MissingExtraError(missing, "server", "the HTTP gateway") from exc
        raise
    return app
