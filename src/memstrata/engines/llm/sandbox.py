"""The documents an LLM tool loop may touch, and nothing else: a ``Folder`` (see ``ports.Folder``).

L2: the tenant's scene documents. L3: its folder holding ``persona.md`` alone. The folder enforces
the path rules (no NUL byte, no absolute path, no folder part or ``..``, no hidden file, ``.md``
only, no symlink; ``PathError``); the sandbox adds what is the tool loop's own: a leading
``scene_blocks/`` is accepted for L2, a path must be a non-empty string, writes are capped at the
loop's size setting (``InputError``) and a new file may be refused by a policy (``InputError``).
"""

from __future__ import annotations

from collections.abc import Callable

from memstrata.errors import InputError, PathError
from memstrata.layers.l2.scene_file import is_soft_deleted, split_meta
from memstrata.ports import Folder

# Decides whether a new file may be created: None allows it, a text explains the refusal.
NewFilePolicy = Callable[[str], str | None]


class Sandbox:
    """A flat folder of Markdown documents with size-capped writes."""

    def __init__(
        self,
        folder: Folder,
        *,
        max_write_bytes: int,
        prefix: str = "",
        allow_new: NewFilePolicy | None = None,
    ) -> None:
        self.folder = folder
        self.max_write_bytes = max_write_bytes
        self.prefix = prefix
        self._allow_new = allow_new
        self.written: list[str] = []

    def name(self, path: object) -> str:
        """The document name ``path`` stands for (the folder checks it when used)."""
        if not isinstance(path, str) or not path.strip():
            raise PathError("a path must be a non-empty string", path=str(path))
        name = path.strip()
        if self.prefix and name.startswith(self.prefix):
            name = name[len(self.prefix) :]
        return name

    def list_files(self) -> str:
        """One line per file: name, size and (for scenes) the META summary."""
        lines = []
        for name in self.folder.names():
            text = self.folder.read(name)
            if text is None:
                continue
            fields, _ = split_meta(text)
            summary = f" | {fields.get('summary', '')}" if fields else ""
            lines.append(f"{self.prefix}{name} ({len(text.encode('utf-8'))} bytes){summary}")
        return "\n".join(lines) or "(no files yet)"

    def live_count(self) -> int:
        """Files that are not soft-deleted (what counts against a scene limit)."""
        texts = (self.folder.read(n) for n in self.folder.names())
        return sum(1 for t in texts if t is not None and not is_soft_deleted(t))

    def read(self, path: object) -> str:
        text = self.folder.read(self.name(path))
        if text is None:
            raise PathError("no such file", path=str(path))
        return text

    def write(self, path: object, content: object) -> str:
        name = self.name(path)
        existing = self.folder.read(name)  # refuses a bad name before anything else
        text = self._checked(content)
        if self._allow_new is not None and existing is None:
            refusal = self._allow_new(name)
            if refusal:
                raise InputError(refusal)
        self.folder.write(name, text)
        self.written.append(name)
        return f"wrote {self.prefix}{name} ({len(text.encode('utf-8', errors='replace'))} bytes)"

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
        size = len(content.encode("utf-8", errors="replace"))
        if size > self.max_write_bytes:
            raise InputError(
                f"{size} bytes exceed the {self.max_write_bytes}-byte limit per file", item="content"
            )
        return content  # the folder drops control characters
