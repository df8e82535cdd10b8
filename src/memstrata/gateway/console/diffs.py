"""A line diff of two versions of a document (a backup and the current one), for a page to lay
out: difflib's grouped opcodes as rows with both line numbers. Only plain text leaves here; the
template escapes it (autoescape), so a scene's text never becomes markup."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

CONTEXT = 3  # unchanged lines shown around each change, as ``diff -u``


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One row: ``kind`` is ``"del"`` (only in the old text), ``"add"`` (only in the new),
    ``"same"``, or ``"hunk"`` (a gap of unchanged lines left out; ``text`` says where)."""

    kind: str
    old_no: int | None
    new_no: int | None
    text: str


@dataclass(frozen=True, slots=True)
class Diff:
    lines: tuple[DiffLine, ...]
    added: int
    removed: int

    @property
    def same(self) -> bool:
        return not (self.added or self.removed)


def diff(old: str, new: str, context: int = CONTEXT) -> Diff:
    """How ``old`` became ``new``, line by line (unified, ``context`` lines around each change)."""
    a, b = old.splitlines(), new.splitlines()
    rows: list[DiffLine] = []
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        where = f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@"
        rows.append(DiffLine("hunk", None, None, where))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [
                    DiffLine("same", i + 1, j + 1, a[i])
                    for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
                ]
                continue
            rows += [DiffLine("del", i + 1, None, a[i]) for i in range(i1, i2)]
            rows += [DiffLine("add", None, j + 1, b[j]) for j in range(j1, j2)]
            removed += i2 - i1
            added += j2 - j1
    return Diff(tuple(rows), added, removed)


def _range(start: int, stop: int) -> str:
    """A hunk's line range as ``diff -u`` writes it: ``start,length``, ``start`` for one line."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def scene_text(summary: str, body: str) -> str:
    """What a scene's diff compares: its summary line, then its body (the META times and heat
    change at every write and would hide the edit)."""
    return f"Summary: {summary}\n\n{body.strip(chr(10))}\n"
