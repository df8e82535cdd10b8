"""Chinese scene documents and persona: the headings, lead lines and summaries the offline writers
use when a scene's (or a persona's) memories are mostly Chinese. The facts themselves come from the
atoms' fields (``draft``), chosen the same way as in English."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from memstrata.engines.offline import atom_text as st
from memstrata.models import Atom

SCENE_HEADINGS = {"Profile": "概况", "Preferences": "喜好", "Instructions": "指令", "Timeline": "时间线"}
SUMMARY_KEYWORDS = 4
_YEAR = re.compile(r"(?:19|20)\d\d年")


def title_of(name: str) -> str:
    """``饮食与健康.md`` -> ``饮食与健康``; ``深圳-无人机.md`` -> ``深圳 无人机``."""
    return name.removesuffix(".md").replace("_", " ").replace("-", " ").strip() or "场景"


def _who(members: Sequence[Atom], k: int) -> str:
    return "、".join(st.people(members, k)) or "用户"


def _month(d: date) -> str:
    return f"{d.year}年{d.month}月"


def summary(name: str, members: Sequence[Atom], words: Sequence[str]) -> str:
    """``健身：攀岩、梧桐山（小王；3 条记忆，2026年11月）``."""
    days = sorted(st.said_on(a) for a in members)
    span = (
        _month(days[0]) if _month(days[0]) == _month(days[-1]) else f"{_month(days[0])}至{_month(days[-1])}"
    )
    topic = f"{title_of(name)}：{'、'.join(words)}" if words else title_of(name)
    return f"{topic}（{_who(members, 2)}；{len(members)} 条记忆，{span}）"


def lead(name: str, members: Sequence[Atom], words: Sequence[str]) -> str:
    """The scene's first paragraph."""
    days = sorted(st.said_on(a) for a in members)
    about = f"（{'、'.join(words)}）" if words else ""
    first, last = days[0], days[-1]
    return (
        f"{_who(members, 3)}关于{title_of(name)}的记忆{about}：共 {len(members)} 条，"
        f"{first.year}年{first.month}月{first.day}日至{last.year}年{last.month}月{last.day}日。"
    )


def shown_note(shown: int, total: int) -> str:
    return f"_显示 {shown} / {total} 条记忆；场景索引列出全部记忆编号。_"


PERSONA_TITLE = "# 用户画像"
INSTRUCTIONS_HEADING = "## 给助手的指令"
OTHERS = "其他人"
ABOUT_USER = "关于用户"
ALWAYS = "（始终）"


def persona_intro(who: str) -> str:
    return f"以下是记忆中关于{who or '用户'}的信息，最能说明问题的在前。"


def dated(text: str, said: date) -> str:
    """A fact with the month it was said, unless it names a year."""
    return text if _YEAR.search(text) else f"{text}（{_month(said)}）"
