"""Language packs: what is language-specific in the offline engine, chosen per message.

A pack writes an atom's text from its language-neutral ``Parts`` and holds its language's rules.
English (``en``) runs the sentence rules of ``l1/``; Chinese (``zh``) has its own in ``lang/zh``.
A third language adds a pack here and a branch in ``pack_for``.
"""

from __future__ import annotations

from typing import Protocol

from memstrata.engines.offline.draft import Parts
from memstrata.engines.offline.lang import en, zh
from memstrata.lang import language_of


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


def pack_for(text: str) -> LanguagePack:
    """The pack for a message's text (a mixed conversation switches message by message)."""
    return zh.CHINESE if language_of(text) == "zh" else en.ENGLISH
