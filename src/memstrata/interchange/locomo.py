"""The LoCoMo benchmark format: a list of samples, each one long two-person conversation.

Each sample becomes one tenant (``user_id = sample_id``); each ``session_<N>`` list one session.
Every turn is a ``user`` message named after its speaker (both people are users of the memory), with
id ``<sample_id>/<dia_id>``. Image turns carry their BLIP caption in the text, since the images are
not released. Turn ``i`` of a session is stamped at the session's ``session_<N>_date_time`` plus
``i * 5`` seconds, so turns keep their order in time.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from pydantic import TypeAdapter

from memstrata.errors import InputError
from memstrata.interchange.sessions import ImportSession
from memstrata.layers.l0.media import photo_note
from memstrata.models import NewMessage, Role, Tenant
from memstrata.models.validation import NonBlank, Record, check

TURN_SPACING_MS = 5_000

_SESSION_KEY = re.compile(r"session_(\d+)")
# "1:56 pm on 8 May, 2023"; parsed by hand so the result does not depend on the process locale.
_DATE_TIME = re.compile(
    r"\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*",
    re.IGNORECASE,
)
_MONTHS = {
    name: number
    for number, full in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        start=1,
    )
    for name in (full, full[:3], full[:4])  # "sept" is a common abbreviation
}


class LocomoTurn(Record):
    speaker: NonBlank
    dia_id: NonBlank
    text: str
    blip_caption: str | None = None

    def message(self, sample_id: str, timestamp: int) -> NewMessage:
        caption = self.blip_caption
        content = f"{self.text} {photo_note(caption)}".lstrip() if caption else self.text
        return NewMessage(Role.USER, content, f"{sample_id}/{self.dia_id}", self.speaker, timestamp)


class LocomoSample(Record):
    sample_id: NonBlank
    conversation: dict[str, Any]


_SAMPLE = TypeAdapter(LocomoSample)
_TURNS = TypeAdapter(list[LocomoTurn])
_WHEN = TypeAdapter(NonBlank)


def parse_locomo(data: object) -> list[ImportSession]:
    """Parse a LoCoMo document into sessions: samples in file order, sessions in numeric order.

    Raises ``InputError`` naming the malformed item, e.g. ``[0].conversation.session_3[4].text``.
    Date keys without a session list (a known quirk of the data) are ignored.
    """
    if not isinstance(data, list):
        raise InputError("a LoCoMo document is an array of samples")
    sessions: list[ImportSession] = []
    for s, raw in enumerate(data):
        sample = check(_SAMPLE, raw, f"[{s}]")
        sessions.extend(_sessions(sample, f"[{s}].conversation"))
    return sessions


def _sessions(sample: LocomoSample, item: str) -> list[ImportSession]:
    conversation = sample.conversation
    numbers = sorted(int(match.group(1)) for key in conversation if (match := _SESSION_KEY.fullmatch(key)))
    out: list[ImportSession] = []
    for number in numbers:
        key = f"session_{number}"
        when = f"{item}.{key}_date_time"
        start_ms = parse_date_time(check(_WHEN, conversation.get(f"{key}_date_time"), when), when)
        turns = check(_TURNS, conversation[key], f"{item}.{key}")
        messages = tuple(
            t.message(sample.sample_id, start_ms + i * TURN_SPACING_MS) for i, t in enumerate(turns)
        )
        out.append(ImportSession(Tenant(user_id=sample.sample_id), key, key, messages))
    return out


def parse_date_time(text: str, item: str) -> int:
    """Epoch ms (UTC) of a LoCoMo session time such as ``"1:56 pm on 8 May, 2023"``."""
    match = _DATE_TIME.fullmatch(text)
    month = _MONTHS.get(match.group(5).lower()) if match else None
    if match is None or month is None:
        raise InputError(f"expected a time like '1:56 pm on 8 May, 2023', got {text!r}", item=item)
    hour, minute = int(match.group(1)), int(match.group(2))
    if not (1 <= hour <= 12 and minute < 60):
        raise InputError(f"not a valid time of day: {text!r}", item=item)
    hour = hour % 12 + (12 if match.group(3).lower() == "p" else 0)
    try:
        moment = datetime(int(match.group(6)), month, int(match.group(4)), hour, minute, tzinfo=UTC)
    except ValueError as exc:  # e.g. 31 April
        raise InputError(f"not a valid date: {text!r}", item=item) from exc
    return round(moment.timestamp() * 1000)
