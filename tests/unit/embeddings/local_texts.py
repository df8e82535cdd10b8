"""Texts for the local-model tests: real conversation turns and questions, plus awkward inputs."""

from __future__ import annotations

import json
import random
import unicodedata

from tests.conftest import LOCOMO

AWKWARD = [
    "",
    "   ",
    "Thanks!",
    "Hello, world! It's 3:45pm -- isn't it?",
    "naïve café, Ångström, São Paulo, Dvořák",
    "İstanbul ΟΔΟΣ straße ﬁne",
    "我爱你，北京欢迎你。日本語のテキスト",
    "emoji 😀🎉 and symbols © ® ™ € £ ¥",
    "tab\tseparated\nlines\r\nand\u2003odd\u3000spaces\u00a0here",
    "zero\u200bwidth\ufeffjoiners and a\x00nul and \x1c\x1f controls",
    "x" * 101,
    "supercalifragilisticexpialidocious " * 3,
    "word " * 600,  # longer than the 256-piece limit
]


def locomo_texts(limit: int) -> list[str]:
    """Turns and questions of the LoCoMo dev set (empty when the shared data is absent)."""
    if not LOCOMO.is_file():
        return []
    samples = json.loads(LOCOMO.read_text(encoding="utf-8"))
    turns: list[str] = []
    questions: list[str] = []
    for sample in samples:
        for value in sample["conversation"].values():
            if isinstance(value, list):
                turns.extend(str(t.get("text", "")) for t in value)
        questions.extend(str(q["question"]) for q in sample["qa"])
    return (turns[: limit // 2] + questions[: limit // 2])[:limit]


def random_unicode(count: int, seed: int = 7) -> list[str]:
    """Random strings over characters whose Unicode category is unchanged since Unicode 3.2.

    Only those: the Rust tokenizer's character tables are older than Python's, and characters
    assigned or re-categorised since split differently there (they end up [UNK] either way).
    """
    old = unicodedata.ucd_3_2_0
    pool = [
        chr(c)
        for c in list(range(0x20, 0x3100)) + list(range(0x4E00, 0x4E80)) + [0x1F600, 0x20000, 0xF900]
        if old.category(chr(c)) != "Cn" and old.category(chr(c)) == unicodedata.category(chr(c))
    ]
    rng = random.Random(seed)
    return [
        "".join(
            rng.choice(pool) if rng.random() < 0.5 else rng.choice("abc deF. ")
            for _ in range(rng.randint(0, 60))
        )
        for _ in range(count)
    ]
