"""What the proxy counts, shown under ``proxy`` in ``/v1/status``: every degradation (memory
that failed or was late, a capture that failed, an unreachable upstream) is counted here as well
as logged, so fail-open never means silent."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(slots=True)
class ProxyStats:
    """Counters since the server started (one event loop updates them: no lock)."""

    requests: int = 0  # proxied model calls (pass-through paths not counted)
    injected: int = 0  # ... that went upstream with memory in them
    injected_chars: int = 0  # the characters injected, all requests together
    auxiliary: int = 0  # title, summary and other requests with no user turn: left alone
    recall_skipped: int = 0  # x-memstrata-recall: off
    capture_skipped: int = 0  # x-memstrata-capture: off
    recall_timeouts: int = 0  # recall not ready within proxy.recall_timeout_ms: sent without memories
    recall_failures: int = 0  # recall raised: sent without memories
    recall_degraded: int = 0  # recall answered but left something out (its degradations)
    prompts_captured: int = 0  # prompts stored while the upstream answered (before the answer ended)
    captured: int = 0  # answers stored after the client had them
    answers_empty: int = 0  # answers with nothing to store (tool calls only, echoed memory blocks)
    capture_failures: int = 0  # the capture raised (store closed, disk full): the answer was served
    upstream_unreachable: int = 0  # 502s: the upstream could not be reached
    upstream_broken: int = 0  # streams the upstream cut off mid-answer
    client_disconnects: int = 0  # streams the client left mid-answer (the upstream request cancelled)

    def snapshot(self) -> dict[str, int]:
        return asdict(self)
