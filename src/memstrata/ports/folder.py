"""The documents a scene or persona writer may touch, as a flat folder of names."""

from __future__ import annotations

from typing import Protocol


class Folder(Protocol):
    """A flat folder of Markdown documents: everything a scene or persona writer may touch.

    Names follow ``layers.folder.check_name``: a file name directly in the folder (no folder part,
    no ``..``, not absolute, not hidden), ending in ``.md``, at most 200 bytes; a persona's folder
    accepts ``persona.md`` alone. A refused name raises ``PathError``, and so does a name that is
    held by something other than a document (a symlink, a folder): it is never read or written
    through. ``write`` drops control characters, replaces the document whole (a reader sees the
    old or the new text, never a mix) and refuses a text over ``MAX_DOCUMENT_BYTES``
    (``InputError``). Raises ``StorageError`` when the storage refuses.
    """

    def names(self) -> list[str]:
        """The folder's documents, by name."""
        ...

    def read(self, name: str) -> str | None:
        """The document's text (bytes that are not UTF-8 replaced), or None when there is none."""
        ...

    def write(self, name: str, text: str) -> None:
        """Create the document or replace its text."""
        ...
