"""Language packs: what is language-specific in the offline engine, chosen per message.

A pack writes an atom's text from its language-neutral ``Parts`` and holds its language's rules.
English (``en``) runs the sentence rules of ``l1/``.
"""

from __future__ import annotations

from typing import Protocol

from memstrata.engines.offline.draft import Parts


class LanguagePack(Protocol):
    """Writes atom text in one language."""

    @property
    def code(self) -> str:
        """The language's code (``en``, ``zh``), recorded on every atom it writes."""
        ...

    def write(self, parts: Parts) -> str:
        """The atom's text for ``parts``: the framing words are the pack's, the content is not
        changed (it was rewritten and dated before)."""
        ...
