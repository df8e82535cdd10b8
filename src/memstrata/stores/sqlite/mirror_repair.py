"""A JSONL mirror compared with the database line by line, and rewritten from it.

A rewrite builds the new folder beside the old one (``.<name>.rewrite/``, every file fsynced, then
a ``.complete`` marker), then swaps the folders with two renames; ``finish_interrupted`` completes
or discards a swap a crash cut short, so the mirror is always the old one or the new one, whole.
"""

from __future__ import annotations

import heapq
import json
import logging
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstrata.errors import storage_error
from memstrata.stores.files.atomic import fsync_dir
from memstrata.stores.files.modes import create_private, make_dirs, open_private
from memstrata.stores.sqlite.mirror import Key, encode, key_of, mirror_files, utc_day

log = logging.getLogger(__name__)
DONE = ".complete"


def _new(folder: Path) -> Path:
    return folder.parent / f".{folder.name}.rewrite"


def _old(folder: Path) -> Path:
    return folder.parent / f".{folder.name}.old"


def finish_interrupted(folder: Path) -> None:
    """Complete (or discard, when it was not whole) a rewrite a crash interrupted."""
    new, old = _new(folder), _old(folder)
    if new.is_dir():
        if (new / DONE).is_file() and not folder.exists():
            log.warning("completing the interrupted rewrite of %s", folder)
            os.rename(new, folder)
        else:
            shutil.rmtree(new)
    (folder / DONE).unlink(missing_ok=True)
    if old.is_dir():
        if folder.is_dir():
            shutil.rmtree(old)
        else:
            os.rename(old, folder)


def rewrite(folder: Path, pages: Iterable[Sequence[tuple[dict[str, Any], int]]]) -> int:
    """Replace ``folder`` with the ``(line, ms)`` pages (ascending ``seq``), each line in the file of
    its ``ms`` day. Returns the lines written. Raises ``StorageError``; the old folder then stays."""
    written, _ = build(folder, pages)
    swap_in(folder, ())
    return written


def build(folder: Path, pages: Iterable[Sequence[tuple[dict[str, Any], int]]]) -> tuple[int, int]:
    """The first half of a rewrite: the new folder written beside ``folder`` (every file fsynced),
    not swapped in yet (``swap_in``). Returns the lines written and the highest ``seq`` among them.
    Raises ``StorageError`` (nothing left behind)."""
    new = _new(folder)
    written = top = 0
    try:
        shutil.rmtree(new, ignore_errors=True)
        make_dirs(new)
        for page in pages:
            _write_days(new, page)
            written += len(page)
            top = int(page[-1][0]["seq"]) if page else top
        for path in mirror_files(new):
            with open(path, "rb+") as fh:
                os.fsync(fh.fileno())
    except OSError as exc:
        shutil.rmtree(new, ignore_errors=True)
        raise storage_error(exc, folder) from exc
    return written, top


def swap_in(folder: Path, pages: Iterable[Sequence[tuple[dict[str, Any], int]]]) -> int:
    """The second half: the ``(line, ms)`` pages committed since ``build`` read the table added to
    the new folder, then the folders swapped (a crash on the way: ``finish_interrupted``). Returns
    the lines added. Raises ``StorageError``; the old folder then stays."""
    new, old = _new(folder), _old(folder)
    added = 0
    try:
        touched: set[Path] = set()
        for page in pages:
            touched |= _write_days(new, page)
            added += len(page)
        for path in touched:
            with open(path, "rb+") as fh:
                os.fsync(fh.fileno())
        create_private(new / DONE)
        fsync_dir(new)
        _swap(folder, new, old)
    except OSError as exc:
        shutil.rmtree(new, ignore_errors=True)
        raise storage_error(exc, folder) from exc
    return added


def _write_days(new: Path, page: Sequence[tuple[dict[str, Any], int]]) -> set[Path]:
    """Append each line to the file of its ``ms`` day in ``new``; returns the files written."""
    by_day: dict[str, list[str]] = {}
    for line, ms in page:
        by_day.setdefault(utc_day(ms), []).append(encode(line))
    for day, texts in by_day.items():
        with open_private(new / f"{day}.jsonl", "a", encoding="utf-8") as fh:
            fh.write("\n".join(texts) + "\n")
    return {new / f"{day}.jsonl" for day in by_day}


def _swap(folder: Path, new: Path, old: Path) -> None:
    if folder.exists():
        os.rename(folder, old)
    try:
        os.rename(new, folder)
    except OSError:
        if old.is_dir() and not folder.exists():
            os.rename(old, folder)
        raise
    fsync_dir(folder.parent)
    (folder / DONE).unlink(missing_ok=True)
    shutil.rmtree(old, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class Findings:
    """How a mirror differs from the database (all zero: they agree)."""

    missing: int = 0  # database records with no line
    extra: int = 0  # lines with no such record (or another record at that seq)
    duplicated: int = 0  # a record's line more than once
    unreadable: int = 0  # lines that are not a record (or not whole)
    disordered: int = 0  # lines below an earlier line's seq in the same file

    def agree(self) -> bool:
        return not (self.missing or self.extra or self.duplicated or self.unreadable or self.disordered)

    def describe(self) -> str:
        parts = [
            f"{self.missing} records missing" if self.missing else "",
            f"{self.extra} lines with no such record" if self.extra else "",
            f"{self.duplicated} duplicated lines" if self.duplicated else "",
            f"{self.unreadable} unreadable lines" if self.unreadable else "",
            f"{self.disordered} lines out of order" if self.disordered else "",
        ]
        return ", ".join(p for p in parts if p) or "in agreement"


def compare(folder: Path, rows: Iterator[tuple[int, Key]]) -> Findings:
    """Walk the mirror's lines (merged by ``seq``) beside the database ``rows`` (ascending ``seq``).
    Reads every line once; memory does not grow with the mirror."""
    counts = {"unreadable": 0, "disordered": 0}
    lines = heapq.merge(*(_entries(p, counts) for p in mirror_files(folder)))
    missing = extra = duplicated = 0
    line, row = next(lines, None), next(rows, None)
    while line is not None or row is not None:
        if row is None or (line is not None and line[0] < row[0]):
            extra, line = extra + 1, next(lines, None)
        elif line is None or row[0] < line[0]:
            missing, row = missing + 1, next(rows, None)
        else:
            matched = line[1] == row[1]
            missing, extra = missing + (not matched), extra + (not matched)
            line = next(lines, None)
            while line is not None and line[0] == row[0]:
                duplicated, extra = duplicated + (line[1] == row[1]), extra + (line[1] != row[1])
                line = next(lines, None)
            row = next(rows, None)
    return Findings(missing, extra, duplicated, counts["unreadable"], counts["disordered"])


def count_lines(folder: Path) -> int:
    """Newline-terminated lines over the mirror's files (bytes counted, nothing parsed)."""
    total = 0
    for path in mirror_files(folder):
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                total += chunk.count(b"\n")
    return total


def _entries(path: Path, counts: dict[str, int]) -> Iterator[tuple[int, Key]]:
    """``(seq, key)`` of each line of one file, ascending; bad and out-of-order lines are counted."""
    previous = 0
    with open(path, "rb") as fh:
        for raw in fh:
            if not raw.strip():
                continue
            try:
                if not raw.endswith(b"\n"):
                    raise ValueError("partial line")
                seq, key = key_of(json.loads(raw))
            except ValueError:
                counts["unreadable"] += 1
                continue
            if seq < previous:  # (an equal seq is a duplicate: the merge counts it)
                counts["disordered"] += 1
                continue
            previous = seq
            yield seq, key
