"""A streamed answer, forwarded event by event and tapped on the way.

Each chunk the upstream sends is passed to the client at once and a copy goes through the SSE
tap to the dialect's accumulator; nothing waits for the end. A client that disconnects (the
ASGI ``http.disconnect``) cancels the forwarding and closes the upstream response, which
closes its connection: the upstream request is cancelled, not read to its end. When the stream
has ended, ``on_done`` runs with whether the client got all of it (the answer is captured then,
after the last byte was sent): every byte, or the answer's final event (an SDK stops reading at
``[DONE]`` and may close the connection before the upstream ends its response). ``before_end``
is awaited before that last byte: the turn's prompt capture, so the prompt is stored before the
client's answer ends. ``began`` is called once the first chunk has gone to the client, and when
the stream ends however it ends (the client gone first, say): it starts that capture, which so
does not compete with the time to first token.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
from starlette.responses import Response

from memstrata.gateway.proxy.dialect import Accumulator
from memstrata.gateway.proxy.sse import SseTap, is_final
from memstrata.gateway.proxy.stats import ProxyStats

log = logging.getLogger("memstrata.proxy")
Done = Callable[[bool], Awaitable[None]]
BeforeEnd = Callable[[], Awaitable[object]]
Began = Callable[[], object]


async def _nothing() -> None:
    return None


class TappedStream(Response):
    def __init__(
        self,
        upstream: httpx.Response,
        headers: list[tuple[bytes, bytes]],
        accumulator: Accumulator,
        stats: ProxyStats,
        on_done: Done,
        before_end: BeforeEnd = _nothing,
        began: Began | None = None,
    ) -> None:
        super().__init__(status_code=upstream.status_code)
        self.raw_headers = headers
        self._upstream = upstream
        self._tap = SseTap()
        self._accumulator = accumulator
        self._stats = stats
        self._on_done = on_done
        self._before_end = before_end
        self._began = began  # cleared once called
        self._forwarded: bool | None = None  # set when the upstream's answer has all been sent on
        self._final_sent = False  # the answer's final event has been sent on

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self._run(receive, send)
        finally:
            self._begin()

    async def _run(self, receive: Any, send: Any) -> None:
        left = False
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                nonlocal left
                while (await receive())["type"] != "http.disconnect":
                    pass
                left = True
                group.cancel_scope.cancel()

            group.start_soon(watch)
            try:
                await self._forward(send)
            finally:
                with anyio.CancelScope(shield=True):
                    await self._upstream.aclose()
                group.cancel_scope.cancel()
        # Complete: every byte of the upstream's answer went to the client, or its final event
        # did. A client that leaves once it has read that event (SDKs stop at ``[DONE]``), while
        # the upstream has not ended its response or the end waits for ``before_end``, has the
        # whole answer.
        complete = self._forwarded is True or self._final_sent
        if left and not complete:
            self._stats.client_disconnects += 1
        await self._on_done(complete)

    def _begin(self) -> None:
        began, self._began = self._began, None
        if began is not None:
            began()

    async def _forward(self, send: Any) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        complete = True
        try:
            async for chunk in self._upstream.aiter_bytes():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                self._begin()
                for event in self._tap.feed(chunk):
                    self._accumulator.feed(event)
                    self._final_sent = self._final_sent or is_final(event)
        except httpx.HTTPError as exc:
            # The status line is gone: all that is left is to end the stream where it broke.
            self._stats.upstream_broken += 1
            log.warning("proxy: the upstream stream broke (%s: %s)", type(exc).__name__, exc)
            complete = False
        for event in self._tap.close():
            self._accumulator.feed(event)
        self._forwarded = complete
        await self._before_end()
        await send({"type": "http.response.body", "body": b"", "more_body": False})
