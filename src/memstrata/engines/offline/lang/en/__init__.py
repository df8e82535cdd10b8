"""The English pack: the framing words of English atoms (its sentence rules live in ``l1/``)."""

from __future__ import annotations

from dataclasses import dataclass

from memstrata.engines.offline.draft import Form, Parts


@dataclass(frozen=True, slots=True)
class English:
    """``LanguagePack`` for English."""

    code: str = "en"

    def write(self, parts: Parts) -> str:
        """``Maya said: ...``, ``Tom asked: ... Maya answered: ...``, ``Maya shared a photo of ...``."""
        if parts.form is Form.QUOTE:
            return f"{parts.speaker} said: {parts.text}"
        if parts.form is Form.ANSWER:
            return f"{parts.asker} asked: {parts.question} {parts.speaker} answered: {parts.text}"
        if parts.form is Form.PHOTO:
            return f"{parts.speaker} shared a photo of {parts.text}."
        return parts.text


ENGLISH = English()
