"""What happens to one call, apart from the I/O: the request to send, whether an outcome is
retried (and after how long), the circuit breaker, and the answer or the error to raise.

Both transports (sync and async) run the same loop::

    ex = Exchange(call, policy, breaker)
    while True:
        outcome = <send ex.request(), or the httpx.TransportError it raised>
        wait = ex.judge(outcome)
        if wait is None: return ex.result()
        <sleep wait>

Server errors come back as the library's own exceptions (``InputError``, ``NotFoundError``,
``PathError``, ``ConflictError``, ``TurnLimitError``, ...), so code written against the library
handles them unchanged; a failing or unreachable server is a ``RemoteError``.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx

from memstrata import errors as e
from memstrata.client.calls import Call

R = TypeVar("R")
_RETRY_ANY = frozenset({500, 502, 503, 504})  # idempotent calls
_RETRY_UNSENT = frozenset({502, 503, 504})  # others: the request did not reach the application
# Errors raised before the request was written: safe to retry whatever the call.
_UNSENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``retries`` more attempts after the first, waiting ``backoff * 2**n`` seconds (capped at
    ``max_backoff``) with up to 25% jitter."""

    retries: int = 3
    backoff: float = 0.2
    max_backoff: float = 5.0

    def delay(self, attempt: int) -> float:
        base = min(self.max_backoff, self.backoff * (2**attempt))
        return float(base * (1 + random.random() / 4))


class CircuitBreaker:
    """After ``threshold`` failed calls in a row the circuit opens: calls fail at once with
    ``CircuitOpenError`` for ``reset_after`` seconds, then one trial call is let through; its
    success closes the circuit, its failure opens it again. Thread-safe. ``clock`` (seconds, only
    differences matter) is ``time.monotonic``; a test passes its own to step past ``reset_after``."""

    def __init__(
        self, threshold: int = 5, reset_after: float = 10.0, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.threshold = threshold
        self.reset_after = reset_after
        self._clock = clock
        self._failures = 0
        self._open_until = 0.0
        self._lock = threading.Lock()

    def check(self) -> None:
        with self._lock:
            now = self._clock()
            if self._failures >= self.threshold and now < self._open_until:
                retry_at = time.time() + (self._open_until - now)
                raise e.CircuitOpenError(
                    f"the memstrata server failed {self._failures} times in a row: not calling it "
                    f"for {self._open_until - now:.1f} s",
                    retry_at=retry_at,
                )
            if self._failures >= self.threshold:  # half-open: this call is the trial
                self._open_until = now + self.reset_after

    def record(self, ok: bool) -> None:
        with self._lock:
            if ok:
                self._failures = 0
                return
            self._failures += 1
            if self._failures >= self.threshold:
                self._open_until = self._clock() + self.reset_after


class Exchange(Generic[R]):
    """One call's life (see the module docstring)."""

    def __init__(self, call: Call[R], policy: RetryPolicy, breaker: CircuitBreaker) -> None:
        self.call = call
        self._policy = policy
        self._breaker = breaker
        self._attempt = 0
        self._outcome: httpx.Response | httpx.TransportError | None = None
        breaker.check()

    def request(self) -> dict[str, Any]:
        c = self.call
        sent: dict[str, Any] = {"method": c.method, "url": c.path}
        if c.params:
            sent["params"] = {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in c.params.items()}
        if c.json is not None:
            sent["json"] = c.json
        return sent

    def judge(self, outcome: httpx.Response | httpx.TransportError) -> float | None:
        """Seconds to wait before the next attempt, or None when this outcome is final."""
        self._outcome = outcome
        if self._attempt < self._policy.retries and self._retryable(outcome):
            self._attempt += 1
            return self._policy.delay(self._attempt - 1)
        failed = isinstance(outcome, httpx.TransportError) or outcome.status_code >= 500
        self._breaker.record(not failed)
        return None

    def _retryable(self, outcome: httpx.Response | httpx.TransportError) -> bool:
        if isinstance(outcome, httpx.TransportError):
            return self.call.idempotent or isinstance(outcome, _UNSENT)
        return outcome.status_code in (_RETRY_ANY if self.call.idempotent else _RETRY_UNSENT)

    def result(self) -> R:
        outcome = self._outcome
        if isinstance(outcome, httpx.TransportError):
            raise e.RemoteError(f"cannot reach the memstrata server: {type(outcome).__name__}: {outcome}")
        assert outcome is not None, "result() before judge()"
        if outcome.status_code < 400:
            return self.call.read(outcome.json())
        return raise_for(outcome, self.call)


def raise_for(response: httpx.Response, call: Call[R]) -> R:
    """Raise the library exception a server error stands for (``errors.WIRE``: the table the
    gateway answers with), or answer ``call.on_missing``."""
    try:
        body = response.json()
        err = body["error"] if isinstance(body.get("error"), dict) else {}
    except (ValueError, AttributeError):
        err = {}
    code, message = str(err.get("code", "")), str(err.get("message", response.reason_phrase))
    status = response.status_code
    if code == "not_found" and call.on_missing is not None:
        return call.on_missing()
    wire = e.WIRE_BY_CODE.get(code)
    back = wire.back(message, err) if wire is not None and wire.back is not None else None
    if back is not None:  # a 5xx has one only when it says more than "the server failed" (not_done)
        raise back
    if status < 500:
        raise e.InputError(f"{call.method} {call.path}: {status} {message}")
    raise e.RemoteError(f"the memstrata server failed: {status} {message}", status=status, code=code or None)
