"""Human-readable JSONL mirrors of L0 and L1: ``conversations/`` and ``records/``, one file a day.

Written after the database commit, append-only. The last mirrored ``seq`` is read from the newest
file's last line on open (and then kept in memory); the store tops the mirror up from there, so a
crash between commit and append leaves no gap and a crash mid-append duplicates nothing.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstrata.models import Atom, Message

log = logging.getLogger(__name__)


def message_line(m: Message) -> dict[str, Any]:
    return {
        "seq": m.seq,
        "id": m.id,
        "user_id": m.tenant.user_id,
        "agent_id": m.tenant.agent_id,
        "session_key": m.session_key,
        "session_id": m.session_id,
        "role": str(m.role),
        "name": m.name,
        "content": m.content,
        "timestamp": m.timestamp,
        "recorded_at": m.recorded_at,
    }


def atom_line(a: Atom) -> dict[str, Any]:
    return {
        "seq": a.seq,
        "id": a.id,
        "user_id": a.tenant.user_id,
        "agent_id": a.tenant.agent_id,
        "type": str(a.type),
        "priority": a.priority,
        "content": a.content,
        "scene_name": a.scene_name,
        "source_message_ids": list(a.source_message_ids),
        "metadata": a.metadata,
        "session_key": a.session_key,
        "created_at": a.created_at,
        "updated_at": a.updated_at,
        "version": a.version,
        "superseded_by": a.superseded_by,
    }


class JsonlMirror:
    """Appends records with ``seq`` above the mirrored mark to daily files in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._lock = threading.Lock()
        self._mark = self._last_line_seq()

    def mark(self) -> int:
        return self._mark

    def append(self, lines: Iterable[dict[str, Any]], stamps: Iterable[int]) -> None:
        with self._lock:
            mark = self._mark
            by_day: dict[str, list[str]] = {}
            top = mark
            for line, ms in zip(lines, stamps, strict=True):
                if line["seq"] <= mark:
                    continue
                day = datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")
                by_day.setdefault(day, []).append(json.dumps(line, ensure_ascii=False, default=str))
                top = max(top, int(line["seq"]))
            if top == mark:
                return
            self._folder.mkdir(parents=True, exist_ok=True)
            for day, text in sorted(by_day.items()):
                with open(self._folder / f"{day}.jsonl", "a", encoding="utf-8") as fh:
                    fh.write("\n".join(text) + "\n")
            self._mark = top

    def _last_line_seq(self) -> int:
        files = sorted(self._folder.glob("*.jsonl")) if self._folder.is_dir() else []
        if not files:
            return 0
        _trim_partial_line(files[-1])
        with open(files[-1], "rb") as fh:
            fh.seek(max(0, files[-1].stat().st_size - 65536))
            tail = fh.read().splitlines()
        for raw in reversed(tail):
            try:
                return int(json.loads(raw)["seq"])
            except (ValueError, KeyError, TypeError):
                log.warning("unreadable line at the end of %s; continuing above it", files[-1])
        return 0


def _trim_partial_line(path: Path) -> None:
    """A crash mid-append can leave a line without its newline: cut it, so the top-up rewrites
    that record whole instead of gluing the next one onto it."""
    size = path.stat().st_size
    if size == 0:
        return
    with open(path, "rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        fh.seek(max(0, size - 1_048_576))
        tail = fh.read()
        cut = tail.rfind(b"\n")
        keep = size - len(tail) + cut + 1 if cut >= 0 else max(0, size - len(tail))
        log.warning("mirror %s ended in a partial line; trimmed %d bytes", path, size - keep)
        fh.truncate(keep)
