"""A real uvicorn server with the gateway, on a free loopback port, in a background thread.

    with LiveServer(home, api_key="k") as server:
        httpx.get(server.url + "/v1/health")

The server owns ``home`` the way ``memstrata serve`` does (its lifespan opens the memory, runs
the pipeline in the background, and closes it on shutdown), under the same uvicorn configuration
(``gateway.serving``: read timeouts, connection limit); the embedder is the hashing one.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn

from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.gateway import serving
from memstrata.gateway.app import create_app, install_redaction
from memstrata.memory import AsyncMemory
from memstrata.settings import load_settings


class LiveServer:
    def __init__(self, home: Path, *, api_key: str | None = None, **settings: Any) -> None:
        if api_key is not None:
            settings["api_key"] = api_key
        self.settings = load_settings(home, **settings)
        self.api_key = api_key
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = int(self._sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        s = self.settings

        async def open_memory() -> AsyncMemory:
            return await AsyncMemory.open(
                s.home, background=True, embedder=HashingEmbedder(64), **_overrides(s)
            )

        self.app = create_app(s, open_memory, host="127.0.0.1")
        self.server = uvicorn.Server(serving.config(self.app, s, log_level="warning"))
        install_redaction(s)
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def __enter__(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the gateway did not start")
            time.sleep(0.02)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=30)
        self._sock.close()


def _overrides(s: Any) -> dict[str, Any]:
    """The settings sections the memory reads, passed on as overrides (they may differ from the
    environment's)."""
    return {
        name: getattr(s, name).model_dump() for name in ("pipeline", "recall", "search", "persona", "turns")
    }
