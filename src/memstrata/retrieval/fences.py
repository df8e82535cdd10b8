"""Fenced code blocks in Markdown text: where they are (the index reads their words apart) and
the text without them (extraction reads an assistant's code as ``[code]``)."""

from __future__ import annotations

import re

# A fence opens at a line start (up to 3 spaces of indent; a backtick fence's info string has no
# backtick, so "```x```" is inline code) and closes with the same character, at least as long, on a
# line of its own; without a closing fence it runs to the end of the text (as in CommonMark).
_FENCE = re.compile(
    r"^[ ]{0,3}(?:"
    r"(?P<b>`{3,})[^`\n]*(?:\n|\Z).*?(?:^[ ]{0,3}(?P=b)`*[ \t]*$|\Z)"
    r"|(?P<t>~{3,})[^\n]*(?:\n|\Z).*?(?:^[ ]{0,3}(?P=t)~*[ \t]*$|\Z))",
    re.MULTILINE | re.DOTALL,
)


def code_blocks(text: str) -> list[tuple[int, int]]:
    """The spans ``(start, end)`` of the text's fenced code blocks, fences included, in order."""
    return [m.span() for m in _FENCE.finditer(text)]


def strip_code_blocks(text: str) -> str:
    """Replace each fenced code block (its fences included) with ``[code]``."""
    return _FENCE.sub("[code]", text)
