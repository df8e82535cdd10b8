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
import logging
import signal
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from memstrata.gateway.admission import Admission, Vouch, authenticated, vouch_with
from memstrata.settings import Settings

log = logging.getLogger("memstrata.gateway")

STOP_BY = "memstrata_stop_by"  # app.state attribute: when (monotonic) the drain must be over


def deadlined(
    base: type[asyncio.Protocol], seconds: float, admission: Admission | None = None
) -> type[asyncio.Protocol]:
    """``base`` (an uvicorn HTTP protocol) whose connections must deliver each whole request
    within ``seconds``, and, with ``admission``, carry an authenticated one within its time."""

    class Deadlined(base):  # type: ignore[valid-type,misc]
        _read_timer: asyncio.TimerHandle | None = None
        _trust_timer: asyncio.TimerHandle | None = None
        _expired = False  # pending past its time, an answer under way: closed once it is sent

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
            if admission is not None:
                self._trust_timer = asyncio.get_running_loop().call_later(admission.within_s, self._trust_due)
                admission.opened(self)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            cycle = getattr(self, "cycle", None)
            if cycle is not None and not cycle.more_body:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if admission is not None and admission.pending(self):
                if self.authenticated_now():
                    self.trust()
                elif self._expired:
                    self.close()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._stop_trust_timer()
            if admission is not None:
                admission.gone(self)
            super().connection_lost(exc)

        # What ``Admission`` asks of a connection.
        def authenticated_now(self) -> bool:
            cycle = getattr(self, "cycle", None)
            return cycle is not None and authenticated(cycle.scope)

        def trust(self) -> None:
            self._stop_trust_timer()
            if admission is not None:
                admission.trusted(self)

        def close(self) -> None:
            self._stop_trust_timer()
            self.transport.close()

        def _stop_trust_timer(self) -> None:
            if self._trust_timer is not None:
                self._trust_timer.cancel()
                self._trust_timer = None

        def _trust_due(self) -> None:
            """A pending connection's time is up: trusted if its request carries a key, else
            closed (after the answer under way, if one is)."""
            self._trust_timer = None
            if admission is None or not admission.pending(self):
                return
            if self.authenticated_now():
                self.trust()
                return
            admission.expired += 1
            cycle = getattr(self, "cycle", None)
            if cycle is not None and not cycle.response_complete:
                if cycle.more_body and admission.vouch is not None:
                    self._vouching = asyncio.ensure_future(self._vouch(admission.vouch, cycle.scope))
                    return
                if not cycle.more_body:
                    self._expired = True
                    return
            self.close()

        async def _vouch(self, vouch: Vouch, scope: Any) -> None:
            try:
                vouched = await vouch(scope)
            except Exception:
                log.exception("vouching for a slow request failed")
                vouched = False
            if vouched:
                if admission is not None:
                    admission.expired -= 1
                self.trust()
            else:
                self.close()

    return Deadlined


def config(app: Any, settings: Settings, **options: Any) -> uvicorn.Config:
    """The uvicorn configuration of the gateway ``app`` under ``settings.server``."""
    s = settings.server
    reserved = min(s.reserved_connections, s.max_connections - 1)
    admission = Admission(s.authenticate_within_seconds, s.max_connections - reserved, vouch_with(app))
    if getattr(app, "state", None) is not None:
        app.state.admission = admission  # for the tests and the log
    return uvicorn.Config(
        app,
        http=deadlined(AutoHTTPProtocol, s.request_read_timeout_seconds, admission),
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
