"""Human-readable JSONL mirrors of L0 and L1: ``conversations/`` and ``records/``.

One line per record (``seq``, ids, tenant and content), appended after the database commit, in
``seq`` order, to the file of the UTC day the line is *written* (``YYYY-MM-DD.jsonl``): a record
whose own date is old (an import) goes to today's file, so files of past days never change.
Within each file lines ascend by ``seq`` (appends happen in ``seq`` order under the database lock),
so the mirrored mark is the highest ``seq`` over the files' last lines: that is how it is read on
open, whatever the files' dates. A rewrite (``rewrite.py``) replaces the whole folder at once.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from memstrata.errors import storage_error
from memstrata.stores.files.modes import make_dirs, open_private

log = logging.getLogger(__name__)
Key = tuple[str, str, str]  # (user_id, agent_id, id): what a line and a database row must share
_CHUNK = 65536


def encode(line: dict[str, Any]) -> str:
    return json.dumps(line, ensure_ascii=False, default=str)


def key_of(line: Any) -> tuple[int, Key]:
    """``(seq, key)`` of a parsed line. Raises ``ValueError`` for a line that is not a record."""
    if not isinstance(line, dict):
        raise ValueError("not a JSON object")
    try:
        return int(line["seq"]), (str(line["user_id"]), str(line["agent_id"]), str(line["id"]))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"missing field {exc}") from exc


def utc_day(ms: int | None = None) -> str:
    """``YYYY-MM-DD`` of ``ms`` (now when None), UTC."""
    moment = datetime.now(UTC) if ms is None else datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%d")


def mirror_files(folder: Path) -> list[Path]:
    """The mirror's ``*.jsonl`` files, by name."""
    return sorted(p for p in folder.glob("*.jsonl") if p.is_file()) if folder.is_dir() else []


@dataclass(frozen=True, slots=True)
class Tail:
    """The highest line of a mirror: its ``seq`` (0 when empty) and key."""

    seq: int = 0
    key: Key | None = None
    problem: str | None = None  # what is wrong near the files' ends, if anything


class JsonlMirror:
    """Appends lines with ``seq`` above the mirrored mark to the file of the day they are written.

    ``writable=False`` (a reader) never touches the files: a partial last line is skipped, not cut.
    """

    def __init__(self, folder: Path, *, writable: bool = True, today: Callable[[], str] = utc_day) -> None:
        self.folder = folder
        self._today = today
        self._lock = threading.Lock()
        self._tail = read_tail(folder, trim=writable)

    def mark(self) -> int:
        return self._tail.seq

    def tail(self) -> Tail:
        return self._tail

    def reset(self) -> None:
        """Read the mark from the files again (after the folder was rewritten)."""
        with self._lock:
            self._tail = read_tail(self.folder, trim=False)

    def refresh(self) -> None:
        """Read the mark again from the two newest files, where another process of the directory
        appends (to the file of the day it writes: today's, or yesterday's just before midnight).
        Call under the mirror's cross-process lock."""
        with self._lock:
            self._tail = read_tail(self.folder, trim=False, newest=2)

    def append(self, lines: Sequence[dict[str, Any]]) -> None:
        """Append ``lines`` (ascending ``seq``) above the mark, in one write to today's file.
        Raises ``StorageError`` when the disk refuses; the file is then cut back to its old end."""
        with self._lock:
            fresh = [ln for ln in lines if int(ln["seq"]) > self._tail.seq]
            if not fresh:
                return
            path = self.folder / f"{self._today()}.jsonl"
            data = ("\n".join(encode(ln) for ln in fresh) + "\n").encode("utf-8")
            _append_whole(path, data)
            seq, key = key_of(fresh[-1])
            self._tail = Tail(seq, key, self._tail.problem)


def _append_whole(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` as whole lines, or leave the file as it was: a partial line
    already at its end (a crash, or a trim a read-only disk refused) is cut first, and a write the
    disk refuses halfway is cut off again (shrinking needs no space)."""
    try:
        make_dirs(path.parent)
        with open_private(path, "a+b", buffering=0) as fh:
            start = _cut_partial_line(fh, path)
            view = memoryview(data)
            try:
                while view:
                    view = view[fh.write(view) or 0 :]
            except OSError:
                os.ftruncate(fh.fileno(), start)
                raise
    except OSError as exc:
        raise storage_error(exc, path) from exc


def read_tail(folder: Path, *, trim: bool, newest: int | None = None) -> Tail:
    """The highest ``seq`` over the last two whole lines of every file, with its key. With
    ``trim``, a partial last line a crash left is cut off first, so a top-up rewrites that record
    whole. Lines out of order or unreadable there are named in ``problem`` (the mirror was edited,
    or written by two processes: it needs a rewrite). ``newest``: only that many files, the
    newest by name."""
    best, problem = Tail(), None
    files = mirror_files(folder)
    for path in files[-newest:] if newest else files:
        if trim:
            _trim_partial_line(path)
        below, read, seen = None, 0, 0
        for raw in _lines_backwards(path):
            read += len(raw) + 1
            try:
                seq, key = key_of(json.loads(raw))
            except ValueError:
                seq, key = -1, None
                problem = problem or f"an unreadable line near the end of {path.name}"
            if key is not None and seq > best.seq:
                best = Tail(seq, key)
            if key is not None and below is not None and seq >= below:
                problem = problem or f"lines out of order near the end of {path.name}"
            below = seq if key is not None else below
            seen += key is not None
            if seen == 2 or read >= _CHUNK:
                break
    return Tail(best.seq, best.key, problem)


def _lines_backwards(path: Path) -> Iterator[bytes]:
    """The whole (newline-terminated) lines of ``path``, last first, read in chunks from the end."""
    with open(path, "rb") as fh:
        pos = fh.seek(0, os.SEEK_END)
        buf = b""
        ended = False  # buf now ends where a whole line ends
        while pos > 0:
            start = max(0, pos - _CHUNK)
            fh.seek(start)
            buf = fh.read(pos - start) + buf
            pos = start
            if not ended:
                cut = buf.rfind(b"\n")
                if cut < 0:
                    continue
                buf, ended = buf[:cut], True  # what follows the last newline is a partial line
            while (cut := buf.rfind(b"\n")) >= 0:
                line, buf = buf[cut + 1 :], buf[:cut]
                if line.strip():
                    yield line
        if ended and buf.strip():
            yield buf  # the file's first line


def _trim_partial_line(path: Path) -> None:
    """Cut a last line that has no newline (a crash mid-append). A refusal (read-only disk) is
    logged: the partial line is then skipped by readers and cut by the next append."""
    try:
        if path.stat().st_size:
            with open(path, "r+b", buffering=0) as fh:
                _cut_partial_line(fh, path)
    except OSError as exc:
        log.warning("cannot trim the partial last line of %s: %s", path, exc)


def _cut_partial_line(fh: IO[bytes], path: Path) -> int:
    """Truncate the open file after its last newline when it does not end with one; its size."""
    size = fh.seek(0, os.SEEK_END)
    if size == 0:
        return 0
    fh.seek(size - 1)
    if fh.read(1) == b"\n":
        return size
    keep, end = 0, size
    while end > 0 and not keep:
        start = max(0, end - _CHUNK)
        fh.seek(start)
        cut = fh.read(end - start).rfind(b"\n")
        keep = start + cut + 1 if cut >= 0 else 0
        end = start
    log.warning("mirror %s ended in a partial line; trimmed %d bytes", path, size - keep)
    fh.truncate(keep)
    return keep
