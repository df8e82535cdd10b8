"""A minimal language pack for the seam's tests: a toy Thai (a script written without spaces, cut
by a four-word dictionary), with its own stopword, dates, notes, role word and turn marker, and an
offline engine pack of its own (``tests/unit/engines/offline/toy_rules``), named, not imported: a
test of the seam alone never loads the engine."""

from __future__ import annotations

import re

from memstrata import lang

THAI_WORDS = re.compile("กาแฟ|และ|ชา|นม|.")


def _cut(run: str, search: bool) -> list[str]:
    return THAI_WORDS.findall(run)


TOY = lang.Language(
    code="th",
    day=lambda d: f"{d.day}/{d.month}/{d.year + 543}",
    span=lambda a, b: f"{a.day}/{a.month}/{a.year + 543}-{b.day}/{b.month}/{b.year + 543}",
    about="{when} (เกี่ยวกับ {about})",
    quoted_note="ความจำที่อ้างถึง",
    tools_guide="ค้นหาได้ {max_calls} ครั้ง",
    also_in="ดูเพิ่ม",
    claims=lambda text: len(re.findall(r"[\u0e00-\u0e7f]", text)) >= 2,
    stopwords=frozenset({"และ"}),
    unspaced=r"[\u0e00-\u0e7f]",
    cut=_cut,
    roles={"user": "ผู้ใช้"},
    turn_words=("ผู้ใช้",),
    said="{who} กล่าวว่า:",
    engines={"offline": "tests.unit.engines.offline.toy_rules:TOY_RULES"},
)
