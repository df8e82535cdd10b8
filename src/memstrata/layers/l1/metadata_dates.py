"""Days an atom's metadata carries as ISO 8601 text (``activity_start``, ``activity_end``,
``mentioned_at``): written by the engines and importers, read by scene writing and recall."""

from __future__ import annotations

from datetime import date


def metadata_day(value: object) -> date | None:
    """The day ``value`` starts with ("2023-05-07", "2023-05-07T10:00:00Z"), or None when it is not
    such a text."""
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None
