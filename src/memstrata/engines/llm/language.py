"""The conversation's language, for the line of each prompt that asks the model to keep it.

Every prompt says "write in the language of the conversation"; a small model follows that
better when it is also told which language that is, so scripts that say it on their own are
named (Chinese, Japanese, Korean, ...). Latin-script languages are left to the model: telling
English from Portuguese needs more than counting characters, and the general rule covers them.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable

# Share of letters a script must have to name the conversation's language.
_MAJORITY = 0.3
_KANA = ("HIRAGANA", "KATAKANA")
_SCRIPTS = {
    "CJK": "Chinese",
    "HANGUL": "Korean",
    "CYRILLIC": "Russian (or the Cyrillic-script language of the messages)",
    "ARABIC": "Arabic (or the Arabic-script language of the messages)",
    "GREEK": "Greek",
    "HEBREW": "Hebrew",
    "THAI": "Thai",
    "DEVANAGARI": "Hindi (or the Devanagari-script language of the messages)",
}

RULE = (
    "Write in the language of the conversation: memories from messages in Chinese are written in "
    "Chinese, from messages in English in English. Never translate names, places or quotes."
)


def script_of(char: str) -> str | None:
    """The script a letter belongs to, by its Unicode name (``LATIN``, ``CJK``, ``HIRAGANA``...)."""
    if not char.isalpha():
        return None
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else None


def conversation_language(texts: Iterable[str]) -> str | None:
    """The language the texts are mostly written in when their script names it, else None."""
    scripts: Counter[str] = Counter()
    for text in texts:
        scripts.update(s for s in map(script_of, text) if s is not None)
    letters = sum(scripts.values())
    if not letters:
        return None
    if sum(scripts[k] for k in _KANA) / letters >= _MAJORITY / 3:
        return "Japanese"  # kanji count as CJK: a little kana already says Japanese
    script, count = max(scripts.items(), key=lambda item: item[1])
    if script in _SCRIPTS and count / letters >= _MAJORITY:
        return _SCRIPTS[script]
    for name, language in _SCRIPTS.items():
        if name != script and scripts[name] / letters >= _MAJORITY:
            return language
    return None


def language_line(texts: Iterable[str]) -> str:
    """The line a prompt's input starts with: which language to write in, when it is known."""
    language = conversation_language(texts)
    if language is None:
        return ""
    return f"The conversation is in {language}: write every memory in {language}.\n\n"
