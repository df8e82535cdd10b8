"""How ``memstrata serve`` runs the gateway under uvicorn: bounded reads, a connection limit, a
bounded shutdown, and exit status 0 after a clean drain.

uvicorn closes an idle keep-alive connection after a few seconds, but never one that has sent
nothing yet, or half a request: such connections (no key needed to open one) were held for as
long as the client liked. ``deadlined`` wraps uvicorn's HTTP protocol so each request, headers
and body, must arrive within ``server.request_read_timeout_seconds`` of the connection opening
(or of the previous response); the connection is closed otherwise. The app's own time to answer
is not limited. ``server.max_connections`` caps concurrent connections and tasks (uvicorn's
``limit_concurrency``: past it, requests get 503).

On SIGTERM uvicorn stops accepting, waits for requests in flight (at most the grace period),
then the lifespan closes the memory with the rest of ``server.shutdown_grace_seconds`` for the
L1 drain: what does not fit stays in the durable backlog for the next start. uvicorn re-raises
the signal after a graceful stop (the process then dies of SIGTERM); ``serve`` treats the
drained SIGTERM as the normal end and exits 0.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from memstrata.settings import Settings

STOP_BY = "memstrata_stop_by"  # app.state attribute: when (monotonic) the drain must be over


def deadlined(base: type[asyncio.Protocol], seconds: float) -> type[asyncio.Protocol]:
    """``base`` (an uvicorn HTTP protocol) whose connections must deliver each whole request
    within ``seconds``."""

    class Deadlined(base):  # type: ignore[valid-type,misc]
        _read_timer: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            self._disarm()
            self._read_timer = asyncio.get_running_loop().call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._read_timer is not None:
                self._read_timer.cancel()
                self._read_timer = None

        def _too_slow(self) -> None:
            self._read_timer = None
            cycle = getattr(self, "cycle", None)
            if cycle is not None and not cycle.more_body:
                return  # the request is in; the app is answering it
            self.transport.close()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            cycle = getattr(self, "cycle", None)
            if cycle is not None and not cycle.more_body:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return Deadlined


def config(app: Any, settings: Settings, **options: Any) -> uvicorn.Config:
    """The uvicorn configuration of the gateway ``app`` under ``settings.server``."""
    s = settings.server
    return uvicorn.Config(
        app,
        http=deadlined(AutoHTTPProtocol, s.request_read_timeout_seconds),
        limit_concurrency=s.max_connections,
        timeout_graceful_shutdown=max(1, round(s.shutdown_grace_seconds)),
        lifespan="on",
        access_log=False,
        **options,
    )


class Server(uvicorn.Server):
    """uvicorn's server, noting when a stop was asked so the drain keeps to the grace period."""

    def __init__(
        self, config: uvicorn.Config, grace: float, on_stop: Callable[[], None] | None = None
    ) -> None:
        super().__init__(config)
        self._grace = grace
        self._on_stop = on_stop  # told at the first stop signal (the workers start their drain)

    def handle_exit(self, sig: int, frame: Any) -> None:
        if self._on_stop is not None:
            self._on_stop()
            self._on_stop = None
        app = self.config.app
        state = getattr(app, "state", None)
        if state is not None and getattr(state, STOP_BY, None) is None:
            setattr(state, STOP_BY, time.monotonic() + self._grace)
        super().handle_exit(sig, frame)


def run(server: Server) -> None:
    """Serve until stopped; a SIGTERM that was drained is a normal end (the caller exits 0)."""
    previous = signal.signal(signal.SIGTERM, lambda *_: None)  # what uvicorn re-raises after
    try:
        server.run()
    finally:
        signal.signal(signal.SIGTERM, previous)


def drain_seconds(state: Any, grace: float) -> float:
    """How long the lifespan may drain: what is left of the grace period since the stop."""
    stop_by = getattr(state, STOP_BY, None)
    if stop_by is None:
        return grace
    return max(0.5, float(stop_by) - time.monotonic())
