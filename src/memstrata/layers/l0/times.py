"""Event times as callers give them, to epoch milliseconds: one rule for the API, the CLI and
every importer, so a time one accepts the others accept too."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from memstrata.errors import InputError

# Epoch values below this are seconds: 10^11 s is the year 5138, 10^11 ms is March 1973.
SECONDS_LIMIT = 10**11
# The last millisecond of the year 9999: what datetime (and every date shown) can represent.
MAX_MS = 253_402_300_799_999


def epoch_ms(value: object, item: str) -> int | None:
    """Epoch milliseconds from epoch ms, epoch seconds (< 10^11) or an ISO 8601 string (UTC when
    it has no zone); None when absent. Anything else, or a time before 1970 or after the year 9999,
    is an ``InputError`` naming ``item``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InputError(
            f"expected epoch milliseconds or an ISO 8601 string, got {type(value).__name__}", item=item
        )
    if isinstance(value, str):
        ms = _iso_ms(value, item)
    elif not math.isfinite(value):
        raise InputError(f"not a valid epoch time: {value!r}", item=item)
    else:
        ms = round(value * 1000) if abs(value) < SECONDS_LIMIT else round(value)
    if not 0 <= ms <= MAX_MS:
        raise InputError(f"time out of range (1970 to 9999): {value!r}", item=item)
    return ms


def _iso_ms(text: str, item: str) -> int:
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InputError(f"not an ISO 8601 time: {text[:80]!r}", item=item) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)
