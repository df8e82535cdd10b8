"""The Chinese pack: Chinese framing words (小王说：..., 助手问：... 小王答：...), and the Chinese
rules of extraction (``rules``, ``dates``, ``extract``), scene topics (``topics``) and the headings
of scenes and persona (``wording``)."""

from __future__ import annotations

from dataclasses import dataclass

from memstrata.engines.offline.draft import Form, Parts


@dataclass(frozen=True, slots=True)
class Chinese:
    """``LanguagePack`` for Chinese."""

    code: str = "zh"

    def write(self, parts: Parts) -> str:
        """``小王说：...``, ``助手问：...小王答：...``, ``小王分享了一张照片：...``."""
        if parts.form is Form.QUOTE:
            return f"{parts.speaker}说：{parts.text}"
        if parts.form is Form.ANSWER:
            return f"{parts.asker}问：{parts.question}{parts.speaker}答：{parts.text}"
        if parts.form is Form.PHOTO:
            return f"{parts.speaker}分享了一张照片：{parts.text}。"
        return parts.text


CHINESE = Chinese()
