"""Writing an export's files: a fresh folder, JSON lines, the manifest."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstrata.errors import InputError, storage_errors
from memstrata.models import ExportReport, Tenant

FORMAT = "memstrata-export"
VERSION = 1
MANIFEST = "memstrata-export.json"


def fresh_folder(out: Path) -> None:
    """Create ``out``; an existing one must be empty (an export never mixes with other files)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(f"{out} exists and is not an empty folder: export into a new one", item="out")
    with storage_errors(out):
        out.mkdir(parents=True, exist_ok=True)


def write_lines(path: Path, lines: Iterable[dict[str, Any]]) -> int:
    """Write one JSON object a line; returns the lines written."""
    n = 0
    with storage_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
                n += 1
    return n


def write_text(path: Path, text: str) -> None:
    with storage_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def finish_export(
    out: Path, layout: str, tenants: Sequence[Tenant], counts: dict[str, int], now: int, written: int
) -> ExportReport:
    """Write the manifest of an export that wrote ``written`` files, and report it."""
    write_manifest(out, layout, tenants, counts, now)
    return ExportReport(
        str(out),
        layout,
        tuple(tenants),
        counts["messages"],
        counts["atoms"],
        counts["scenes"],
        counts["personas"],
        written + 1,  # and the manifest
    )


def write_manifest(
    out: Path, layout: str, tenants: Sequence[Tenant], counts: dict[str, int], now: int
) -> None:
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "layout": layout,
        "created_at": iso(now),
        "tenants": [{"user_id": t.user_id, "agent_id": t.agent_id} for t in tenants],
        "counts": counts,
    }
    write_text(out / MANIFEST, json.dumps(doc, ensure_ascii=False, indent=2) + "\n")


def layout_of(root: Path) -> str | None:
    """The layout a memstrata export names in its manifest (None: no manifest; unreadable: error)."""
    path = root / MANIFEST
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path} is not a readable export manifest: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"{path} is not a memstrata export manifest")
    if doc.get("version") != VERSION:
        raise InputError(f"{path}: export version {doc.get('version')!r} is not {VERSION}")
    return str(doc.get("layout"))


def iso(ms: int) -> str:
    """``2026-03-01T10:01:05.123Z``: exact to the millisecond."""
    moment = datetime.fromtimestamp(ms // 1000, UTC) + timedelta(milliseconds=ms % 1000)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def day(ms: int) -> str:
    return (datetime.fromtimestamp(ms // 1000, UTC)).strftime("%Y-%m-%d")
