"""The HTTP client of a memstrata server: the library's methods over HTTP, sync and async, with
timeouts, retries with backoff and a circuit breaker (see ``clients``)."""

from memstrata.client.clients import AsyncMemoryClient, MemoryClient
from memstrata.client.exchange import CircuitBreaker, RetryPolicy

__all__ = ["AsyncMemoryClient", "CircuitBreaker", "MemoryClient", "RetryPolicy"]
