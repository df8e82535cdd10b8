"""What the proxy keeps for the server's lifetime (``app.state.proxy``): its settings, the
pooled upstream client, the injector's caches, the prompt captures under way and the counters."""

from __future__ import annotations

import httpx

from memstrata.gateway.proxy import upstream
from memstrata.gateway.proxy.capture import Pending
from memstrata.gateway.proxy.injection import Injector
from memstrata.gateway.proxy.settings import ProxyConfig
from memstrata.gateway.proxy.stats import ProxyStats
from memstrata.settings import Settings


class ProxyState:
    def __init__(self, settings: Settings) -> None:
        self.config = ProxyConfig.of(settings)
        self.stats = ProxyStats()
        self.injector = Injector(settings, self.stats)
        self.pending = Pending()
        self._grace = settings.server.shutdown_grace_seconds
        self._settings = settings.proxy
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        """Made on first use, inside the server's event loop."""
        if self._client is None:
            self._client = upstream.client(self._settings)
        return self._client

    async def aclose(self) -> None:
        """Before the memory closes: the prompt captures still running end first."""
        await self.pending.drain(self._grace / 2)
        if self._client is not None:
            await self._client.aclose()
            self._client = None
