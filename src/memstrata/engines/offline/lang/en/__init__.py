"""The English pack: the framing words of English atoms (its sentence rules live in ``l1/``)."""

from __future__ import annotations

from dataclasses import dataclass

from memstrata.engines.offline.draft import Form, Parts


def opening(text: str) -> str:
    """``text`` as it opens a sentence: "the user said" -> "The user said" (a name is unchanged)."""
    return text[:1].upper() + text[1:]


@dataclass(frozen=True, slots=True)
class English:
    """``LanguagePack`` for English."""

    code: str = "en"

    def write(self, parts: Parts) -> str:
        """``Maya said: ...``, ``The assistant asked: ... The user answered: ...``, ``Maya shared a
        photo of ...``; a nameless speaker is "the user", capitalised where a sentence opens."""
        if parts.form is Form.QUOTE:
            return f"{opening(parts.speaker)} said: {parts.text}"
        if parts.form is Form.ANSWER:
            return f"{opening(parts.asker)} asked: {parts.question} {opening(parts.speaker)} answered: {parts.text}"
        if parts.form is Form.PHOTO:
            return f"{opening(parts.speaker)} shared a photo of {parts.text}."
        return opening(parts.text)


ENGLISH = English()
