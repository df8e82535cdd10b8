"""The files an LLM tool loop may touch, and nothing else.

L2: the ``.md`` files directly inside the tenant's ``scene_blocks/``. L3: exactly ``persona.md``.
A path is refused (``PathError``) when it holds a NUL byte, is absolute, has any folder part
(``..`` included; a leading ``scene_blocks/`` is accepted for L2), names a hidden file or another
extension than ``.md``, is a symlink, or resolves outside the sandbox. Reads never follow symlinks
(``O_NOFOLLOW``) and writes replace files atomically (a planted symlink is replaced, never
followed). Writes are capped in size (``InputError``); a new file the policy refuses is an ``InputError``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from memstrata.atomic import atomic_write
from memstrata.errors import InputError, PathError
from memstrata.layers.l2.scene_file import is_soft_deleted, split_meta, strip_controls

_DRIVE = re.compile(r"^[A-Za-z]:")
_MAX_NAME_BYTES = 200  # under the 255-byte file-name limit, with room for cleanup's renames
# Decides whether a new file may be created: None allows it, a text explains the refusal.
NewFilePolicy = Callable[[str], str | None]


class Sandbox:
    """A flat folder of Markdown files (``only`` set: that single file) with size-capped writes."""

    def __init__(
        self,
        root: Path,
        *,
        max_write_bytes: int,
        only: str | None = None,
        prefix: str = "",
        allow_new: NewFilePolicy | None = None,
    ) -> None:
        self.root = root.resolve(strict=True)
        self.max_write_bytes = max_write_bytes
        self.only = only
        self.prefix = prefix
        self._allow_new = allow_new
        self.written: list[str] = []

    def resolve(self, path: object) -> Path:
        """The file ``path`` names inside the sandbox. Raises ``PathError`` when it is not allowed."""
        if not isinstance(path, str) or not path.strip():
            raise PathError("a path must be a non-empty string", path=str(path))
        if "\0" in path:
            raise PathError("NUL byte in path", path=path)
        name = path.strip()
        if self.prefix and name.startswith(self.prefix):
            name = name[len(self.prefix) :]
        if name.startswith(("/", "\\", "~")) or _DRIVE.match(name):
            raise PathError("absolute paths are not allowed", path=path)
        if "/" in name or "\\" in name or name in (".", ".."):
            raise PathError("only files directly in the sandbox folder are allowed", path=path)
        if name.startswith("."):
            raise PathError("hidden files are not allowed", path=path)
        if len(name.encode("utf-8")) > _MAX_NAME_BYTES:
            raise PathError(f"file names are limited to {_MAX_NAME_BYTES} bytes", path=path)
        if not name.lower().endswith(".md"):
            raise PathError("only .md files are allowed", path=path)
        if self.only is not None and name != self.only:
            raise PathError(f"only {self.only} may be used", path=path)
        target = self.root / name
        if target.is_symlink():
            raise PathError("symlinks are not allowed", path=path)
        if target.resolve().parent != self.root:
            raise PathError("path leaves the sandbox", path=path)
        return target

    def files(self) -> list[Path]:
        """The sandbox's regular ``.md`` files (never symlinks), by name."""
        candidates = [self.root / self.only] if self.only is not None else sorted(self.root.iterdir())
        return [
            p
            for p in candidates
            if p.name.lower().endswith(".md")
            and not p.name.startswith(".")
            and not p.is_symlink()
            and p.is_file()
        ]

    def list_files(self) -> str:
        """One line per file: name, size and (for scenes) the META summary."""
        lines = []
        for p in self.files():
            fields, _ = split_meta(self._read(p))
            summary = f" | {fields.get('summary', '')}" if fields else ""
            lines.append(f"{self.prefix}{p.name} ({p.stat().st_size} bytes){summary}")
        return "\n".join(lines) or "(no files yet)"

    def live_count(self) -> int:
        """Files that are not soft-deleted (what counts against a scene limit)."""
        return sum(1 for p in self.files() if not is_soft_deleted(self._read(p)))

    def read(self, path: object) -> str:
        target = self.resolve(path)
        if not target.is_file():
            raise PathError("no such file", path=str(path))
        return self._read(target)

    def write(self, path: object, content: object) -> str:
        target = self.resolve(path)
        text = self._checked(content)
        if not target.exists() and self._allow_new is not None:
            refusal = self._allow_new(target.name)
            if refusal:
                raise InputError(refusal)
        atomic_write(target, text)
        self.written.append(target.name)
        return f"wrote {self.prefix}{target.name} ({len(text.encode('utf-8'))} bytes)"

    def edit(self, path: object, old: object, new: object) -> str:
        """Replace the one exact occurrence of ``old`` with ``new``."""
        if not isinstance(old, str) or not old or not isinstance(new, str):
            raise InputError("old_text must be a non-empty string and new_text a string", item="arguments")
        current = self.read(path)
        count = current.count(old)
        if count != 1:
            raise InputError(
                f"old_text occurs {count} times; it must match exactly one place (copy it from read_file)",
                item="old_text",
            )
        return self.write(path, current.replace(old, new, 1))

    def _checked(self, content: object) -> str:
        if not isinstance(content, str):
            raise InputError("content must be a string", item="content")
        if "\0" in content:
            raise InputError("content must not contain NUL bytes", item="content")
        size = len(content.encode("utf-8"))
        if size > self.max_write_bytes:
            raise InputError(
                f"{size} bytes exceed the {self.max_write_bytes}-byte limit per file", item="content"
            )
        return strip_controls(content)  # the stores refuse files with control characters

    @staticmethod
    def _read(target: Path) -> str:
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            return fh.read().decode("utf-8", errors="replace")
