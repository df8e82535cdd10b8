"""The rules of a ``Folder`` (see ``ports.Folder``), the same on every backend: which document names
it accepts and what a written text may hold.

A name is a file name directly in the folder: no folder part (``/``, ``\\``, ``..``), not
absolute, not hidden, ending in ``.md`` (any case), at most ``MAX_NAME_BYTES`` bytes of UTF-8. A
text is at most ``MAX_DOCUMENT_BYTES`` bytes; control characters (tab, newline and carriage return
aside) are dropped when it is written, so a stored document is always readable.
"""

from __future__ import annotations

import re

from memstrata.errors import InputError, PathError
from memstrata.layers.l2.scene_file import strip_controls

MAX_NAME_BYTES = 200  # under the 255-byte file-name limit, with room for cleanup's renames
# A hard ceiling for any writer (the LLM tool loop has its own, smaller, setting): one document
# must never cost more than this in a file or a database row.
MAX_DOCUMENT_BYTES = 4 * 1024 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:")


def check_name(name: str, only: str | None = None) -> str:
    """``name`` when a folder may hold a document of that name (``only``: that name alone).
    Raises ``PathError`` saying why not."""
    if not name:
        raise PathError("a document name must not be empty", path=name)
    if "\0" in name:
        raise PathError("NUL byte in path", path=name)
    if name.startswith(("/", "\\", "~")) or _DRIVE.match(name):
        raise PathError("absolute paths are not allowed", path=name)
    if "/" in name or "\\" in name or name in (".", ".."):
        raise PathError("only files directly in the sandbox folder are allowed", path=name)
    if name.startswith("."):
        raise PathError("hidden files are not allowed", path=name)
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise PathError(
            "a document name must be UTF-8 text", path=name.encode("utf-8", "replace").decode()
        ) from None
    if size > MAX_NAME_BYTES:
        raise PathError(f"file names are limited to {MAX_NAME_BYTES} bytes", path=name)
    if not name.lower().endswith(".md"):
        raise PathError("only .md files are allowed", path=name)
    if only is not None and name != only:
        raise PathError(f"only {only} may be used", path=name)
    return name


def clean_text(text: str) -> str:
    """``text`` as a folder stores it: control characters dropped, a lone surrogate (no UTF-8 for
    it) replaced by ``?``. Raises ``InputError`` when it is over ``MAX_DOCUMENT_BYTES``."""
    raw = text.encode("utf-8", errors="replace")
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise InputError(f"{len(raw)} bytes exceed the {MAX_DOCUMENT_BYTES}-byte limit per document")
    return strip_controls(raw.decode("utf-8"))
