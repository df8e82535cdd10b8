"""The scene file format of DESIGN section 2, parsed and written exactly::

    -----META-START-----
    created: 2026-07-30 10:02
    updated: 2026-08-04 09:15
    summary: one line used in navigation and prompts
    heat: 120
    -----META-END-----

    <Markdown body>

A file without a META block is all body. Times are UTC, to the minute.

A file is *readable* when it is UTF-8 text without control characters (tab, newline and carriage
return aside) and, if it opens a META block, the block is closed and holds only ``key: value``
lines (``scene_problem`` says why not). Unreadable files are never parsed into a scene; what this
module writes is always readable (control characters are dropped).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from memstrata.models import Scene

META_START = "-----META-START-----"
META_END = "-----META-END-----"
DELETED = "[DELETED]"
_TIME_FORMAT = "%Y-%m-%d %H:%M"
_KEY = re.compile(r"^([A-Za-z_]+)\s*:\s*(.*)$")
# C0 controls but tab, newline and carriage return; DEL; C1 controls (U+009B opens terminal escapes).
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def format_time(ms: int) -> str:
    """``2026-07-30 10:02`` (UTC) for epoch milliseconds."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime(_TIME_FORMAT)


def parse_time(text: str) -> int | None:
    """Epoch ms of a META time, or None when it is not one."""
    try:
        moment = datetime.strptime(text.strip(), _TIME_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return None
    return int(moment.timestamp() * 1000)


def one_line(text: str) -> str:
    """A summary fit for a META line: whitespace (newlines included) collapsed."""
    return " ".join(text.split())


def strip_controls(text: str) -> str:
    """``text`` without control characters (tab, newline and carriage return kept)."""
    return CONTROL.sub("", text)


def text_problem(raw: bytes) -> str | None:
    """Why ``raw`` is not usable text (not UTF-8, a control character), or None when it is."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (invalid byte at offset {exc.start})"
    if found := CONTROL.search(text):
        line = text.count("\n", 0, found.start()) + 1
        return f"control character U+{ord(found.group()):04X} on line {line}"
    return None


def scene_problem(raw: bytes) -> str | None:
    """Why ``raw`` is not a readable scene file, or None when it is (see the module docstring)."""
    if (problem := text_problem(raw)) is not None:
        return problem
    lines = raw.decode("utf-8").lstrip("\ufeff").split("\n")
    first = lines[0].strip()
    if first != META_START:
        return "garbled META start line" if first.startswith("-----META") else None
    ends = [i for i, line in enumerate(lines) if i > 0 and line.strip() == META_END]
    if not ends:
        return "META block is not closed (the file may be truncated)"
    for i, line in enumerate(lines[1 : ends[0]], start=2):
        if line.strip() and not _KEY.match(line.strip()):
            return f"garbled META line {i}"
    return None


def split_meta(text: str) -> tuple[dict[str, str] | None, str]:
    """``(META fields, body)``; ``(None, text)`` when the text does not start with a whole META block."""
    stripped = text.lstrip("\ufeff")
    lines = stripped.split("\n")
    if not lines or lines[0].strip() != META_START:
        return None, text
    ends = [i for i, line in enumerate(lines) if i > 0 and line.strip() == META_END]
    if not ends:
        return None, text
    end = ends[0]
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        if match := _KEY.match(line.strip()):
            fields[match.group(1).lower()] = match.group(2).strip()
    body = "\n".join(lines[end + 1 :])
    return fields, body.strip("\n")


def parse_scene(name: str, text: str, default_time: int) -> Scene:
    """A scene from a file's text. Missing or malformed META values get defaults: summary ``""``,
    heat 0, times ``default_time`` (callers pass the file's modification time)."""
    fields, body = split_meta(text)
    if fields is None:
        return Scene(name, "", 0, default_time, default_time, body.strip("\n"))
    created = parse_time(fields.get("created", "")) or default_time
    updated = parse_time(fields.get("updated", "")) or created
    try:
        heat = max(0, int(fields.get("heat", "0")))
    except ValueError:
        heat = 0
    return Scene(name, one_line(fields.get("summary", "")), heat, created, updated, body)


def render_scene(scene: Scene) -> str:
    """The file text of ``scene``, in the exact META format, ending with one newline (control
    characters dropped, so the file is always readable)."""
    body = strip_controls(scene.body).strip("\n")
    return (
        f"{META_START}\n"
        f"created: {format_time(scene.created)}\n"
        f"updated: {format_time(scene.updated)}\n"
        f"summary: {one_line(strip_controls(scene.summary))}\n"
        f"heat: {max(0, scene.heat)}\n"
        f"{META_END}\n\n"
        f"{body}\n"
    )


def is_soft_deleted(text: str) -> bool:
    """True for a file that is only ``[DELETED]``, empty, or META without a body (or with a body
    that is only ``[DELETED]``): the cleanup removes these."""
    _, body = split_meta(text)
    return body.strip() in ("", DELETED)
