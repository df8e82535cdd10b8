"""The speaker's own introduction before a fact ("I'm Sam, I teach chemistry"): no fact itself."""

from __future__ import annotations

import re

# "I'm Sam, I teach chemistry": the speaker saying their own name before the fact. Rewritten word by
# word it became "Sam is Sam, Sam teaches chemistry" (bench/first_impressions.py); the name is the
# subject already, so the introduction is dropped when a clause follows it.
_INTRODUCTION = re.compile(
    r"(?:i'm|i am|my name is|this is|it's)\s+(?P<name>[^\W\d_][\w'-]*)\s*[,;:\u2014-]+\s*", re.I
)


def without_introduction(text: str, me: str) -> str:
    """``text`` without the speaker ``me`` naming themselves before a clause."""
    found = _INTRODUCTION.match(text.lstrip())
    if found is None or found.group("name").lower() != me.lower():
        return text
    rest = re.sub(r"^(?:and|so)\s+", "", text.lstrip()[found.end() :], flags=re.I)
    return rest[:1].upper() + rest[1:]
