"""Scene file names: a safe charset, lowercase, ``.md``, and ``-2``, ``-3`` on collisions."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from memstrata.errors import PathError

SUFFIX = ".md"
FOLDER = "scene_blocks"
MAX_STEM = 64
_UNSAFE = re.compile(r"[^\w-]+", re.UNICODE)
_DASHES = re.compile(r"-{2,}")


def stem_of(name: str) -> str:
    """A safe stem for ``name``: NFKC, lowercase, runs of anything but letters, digits, ``_`` and
    ``-`` turned into one ``-``, trimmed, at most 64 characters; ``scene`` when nothing is left."""
    base = name[: -len(SUFFIX)] if name.lower().endswith(SUFFIX) else name
    text = unicodedata.normalize("NFKC", base).lower()
    text = _DASHES.sub("-", _UNSAFE.sub("-", text)).strip("-_")
    return text[:MAX_STEM].rstrip("-_") or "scene"


def normalise(name: str) -> str:
    """The normal file name for ``name`` (collisions not considered)."""
    return stem_of(name) + SUFFIX


def assign(names: Iterable[str], taken: Iterable[str] = ()) -> dict[str, str]:
    """Normal, unique names for ``names``: ``{name: new name}``.

    Names that are already normal keep themselves (first come, in sorted order); the others get the
    normal form, or ``<stem>-2.md``, ``<stem>-3.md``, ... when that is used by a file or ``taken``.
    """
    ordered = sorted(set(names))
    used = set(taken)
    out: dict[str, str] = {}
    for name in ordered:
        if normalise(name) == name and name not in used:
            out[name] = name
            used.add(name)
    for name in ordered:
        if name in out:
            continue
        out[name] = _free(stem_of(name), used)
        used.add(out[name])
    return out


def unique(hint: str, taken: Iterable[str]) -> str:
    """A normal file name made from ``hint`` that is not in ``taken``."""
    return _free(stem_of(hint), set(taken))


def _free(stem: str, used: set[str]) -> str:
    candidate, n = stem + SUFFIX, 2
    while candidate in used:
        candidate, n = f"{stem}-{n}{SUFFIX}", n + 1
    return candidate


def from_path(path: str) -> str:
    """The scene file name a reader's path names: ``family.md`` or ``scene_blocks/family.md``.

    Raises ``PathError`` for anything else (other folders, ``..``, absolute paths, NUL bytes,
    names that are not normalised ``.md`` files)."""
    name = path.strip()
    if name.startswith(FOLDER + "/"):
        name = name[len(FOLDER) + 1 :]
    if "\0" in name or "/" in name or "\\" in name or name in ("", ".", ".."):
        raise PathError("not a scene path (use scene_blocks/<name>.md)", path=path)
    if normalise(name) != name:
        raise PathError("not a scene file name (lowercase, ending in .md)", path=path)
    return name
