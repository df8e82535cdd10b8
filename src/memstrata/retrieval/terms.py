"""Text to search terms, the same way on the index side and the query side.

Words are lowercased Unicode word runs; CJK runs are segmented with jieba (loaded lazily, only
when CJK text appears); common English function words are dropped from queries. Stemming is left
to the index (FTS5 Porter), which applies it to both sides.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")
_jieba_lock = threading.Lock()

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
    down during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's
    her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it
    it's its itself let's me more most mustn't my myself no nor not of off on once only or other ought
    our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some such
    than that that's the their theirs them themselves then there there's these they they'd they'll
    they're they've this those through to too under until up very was wasn't we we'd we'll we're we've
    were weren't what what's when when's where where's which while who who's whom why why's with won't
    would wouldn't you you'd you'll you're you've your yours yourself yourselves also just like get got
    would will shall may might must kind sort thing things really much many lot lots etc ever
    """.split()
)


@lru_cache(maxsize=1)
def _jieba() -> Any:
    with _jieba_lock:
        import jieba

        jieba.setLogLevel(60)  # its start-up chatter goes to stderr otherwise
        return jieba


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def segment(text: str) -> str:
    """Text with CJK runs split into words by spaces (search mode: a long word also yields its
    parts, so "北京烤鸭" matches "北京" and "烤鸭"). Non-CJK text is returned unchanged."""
    if not has_cjk(text):
        return text
    jieba = _jieba()
    return _CJK.sub(
        lambda m: " " + " ".join(w for w in jieba.cut_for_search(m.group(0)) if w.strip()) + " ", text
    )


def words(text: str) -> list[str]:
    """Lowercased word tokens, CJK segmented."""
    return [w.lower() for w in _WORD.findall(segment(text))]


def query_terms(query: str, *, max_terms: int = 64) -> list[str]:
    """Distinct search terms of a query, stopwords removed (kept when nothing else is left)."""
    tokens = [t[:-2] if t.endswith("'s") else t for t in words(query)]
    kept = [t for t in tokens if t not in STOPWORDS and (len(t) > 1 or t.isdigit() or has_cjk(t))]
    chosen = kept or tokens
    return list(dict.fromkeys(chosen))[:max_terms]
