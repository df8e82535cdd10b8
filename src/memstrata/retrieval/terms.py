"""Text to search terms, the same way on the index side and the query side.

Words are lowercased Unicode word runs; CJK runs are segmented with jieba (loaded lazily, only
when CJK text appears); common English function words are dropped from queries. Stemming is left
to the index (FTS5 Porter), which applies it to both sides.

Whatever a text holds, the work per word is bounded, so one long "word" (a base64 blob, a pasted
``AAAA...``, a CJK run without punctuation) costs what as many short ones would:
- a run of letters and digits longer than ``MAX_WORD_CHARS`` counts as its first
  ``MAX_WORD_CHARS`` (``cut_long_words``), on the index side (``segment``, which builds the FTS
  documents) and the query and judging sides (``words``, ``plain_words``) alike, so a cut query
  word still meets the cut indexed one. No English or Chinese word comes near the length; a sha256
  in hex (64) still counts whole. (Before, relevance scoring built every prefix of every word: one
  80,000-character word cost 2.5 GB.)
- jieba sees a CJK run in pieces of at most ``SEGMENT_RUN_CHARS`` characters: its time grows
  faster than linearly with a run's length (a run of 200,000 characters took 348 s, in pieces of
  100 under 5 s). A word split by a piece's edge is lost; a sentence that long without
  punctuation is not prose.
- a judged text (a search candidate's keyword share, recall's content words) is read as far as
  its first ``JUDGED_CHARS`` characters (``judged``), as an embedder reads a record's start: a
  search judges up to a few dozen candidates, and 4,000 characters of CJK text are about 20 ms of
  jieba (100 ms for the worst run seen, one character repeated).
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

import snowballstemmer

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
MAX_WORD_CHARS = 64
SEGMENT_RUN_CHARS = 100
JUDGED_CHARS = 4_000
# A run of word characters longer than MAX_WORD_CHARS, matched from its start only (the
# look-behind keeps the search from retrying inside every long run).
_LONG_RUN = re.compile(rf"(?<![^\W_])[^\W_]{{{MAX_WORD_CHARS + 1},}}")
_jieba_lock = threading.Lock()
T = TypeVar("T")

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

# Chinese function words and chat particles: they say nothing a memory is about. Shared by the
# offline engine (content words, scene keywords) and kept out of query terms.
CHINESE_STOPWORDS = frozenset(
    """
    的 了 是 在 我 你 他 她 它 我们 你们 他们 她们 这 那 这个 那个 这些 那些 就 都 也 还 又 和 跟 与 及
    吗 呢 吧 啊 呀 哦 嗯 哈 哈哈 啦 嘛 么 着 过 被 把 给 让 对 从 向 到 为 为了 因为 所以 但是 但 而且
    可是 如果 虽然 一个 一些 一下 一点 有点 什么 怎么 怎么样 哪 哪里 哪儿 谁 多少 几 很 太 挺 非常
    真 真的 比较 最 更 没 没有 不 不是 有 会 能 可以 要 想 觉得 知道 说 刚 刚刚 已经 正在 还是 或者
    然后 其实 就是 这样 那样 自己 一直 现在 时候 东西 事情 好 好的 对了 顺便
    """.split()
)


# A text's derived terms (its stems, its content words) are cached: a candidate's text recurs
# across a tenant's searches and recalls. A text longer than this (a pasted document) is worked
# out each time rather than kept. A judged text (``JUDGED_CHARS`` of a record and its speaker and
# date) is kept: a long technical message's was worked out on every search that found it.
CACHED_TEXT_CHARS = JUDGED_CHARS + 200


def short_text_cache(maxsize: int) -> Callable[[Callable[[str], T]], Callable[[str], T]]:
    """``lru_cache`` of a pure function of a text, for texts of at most ``CACHED_TEXT_CHARS``."""

    def decorate(work: Callable[[str], T]) -> Callable[[str], T]:
        cached = lru_cache(maxsize=maxsize)(work)

        @functools.wraps(work)
        def call(text: str) -> T:
            return cached(text) if len(text) <= CACHED_TEXT_CHARS else work(text)

        return call

    return decorate


_stemmers = threading.local()


@lru_cache(maxsize=65_536)
def porter_stem(word: str) -> str:
    """The Porter stem of ``word`` lowercased: the algorithm of FTS5's porter tokenizer, which stems
    the index side. Each thread stems with its own stemmer: a snowballstemmer object keeps the word
    it works on, so threads sharing one garbled each other's stems (and this cache kept them)."""
    stemmer = getattr(_stemmers, "porter", None)
    if stemmer is None:
        stemmer = _stemmers.porter = snowballstemmer.stemmer("porter")
    return str(stemmer.stemWord(word.lower()))


@lru_cache(maxsize=1)
def _jieba() -> Any:
    with _jieba_lock:
        import jieba

        jieba.setLogLevel(60)  # its start-up chatter goes to stderr otherwise
        return jieba


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def language_of(text: str) -> str:
    """``zh`` when Chinese characters carry the text (about two characters make a word), else
    ``en``: "我在Google工作" is Chinese, "I love 北京烤鸭" is English."""
    han = len(_HAN.findall(text))
    return "zh" if han >= 2 and han / 2 > len(_LATIN_WORD.findall(text)) else "en"


def cut_long_words(text: str) -> str:
    """``text`` with every run of letters and digits longer than ``MAX_WORD_CHARS`` cut to its
    first ``MAX_WORD_CHARS``."""
    if len(text) <= MAX_WORD_CHARS:
        return text
    return _LONG_RUN.sub(lambda m: m.group(0)[:MAX_WORD_CHARS], text)


def judged(text: str) -> str:
    """The part of a text that is judged: its first ``JUDGED_CHARS`` characters."""
    return text if len(text) <= JUDGED_CHARS else text[:JUDGED_CHARS]


def _pieces(run: str) -> list[str]:
    """A CJK run in the pieces jieba is given (at most ``SEGMENT_RUN_CHARS`` each)."""
    return [run[i : i + SEGMENT_RUN_CHARS] for i in range(0, len(run), SEGMENT_RUN_CHARS)]


def _spaced(text: str, cut: Callable[[str], Any]) -> str:
    """``text`` with each CJK run replaced by ``cut``'s words of its pieces, between spaces, then
    long words cut (after: a CJK run is one word run to the cut, its words are not)."""
    if has_cjk(text):
        text = _CJK.sub(
            lambda m: " " + " ".join(w for p in _pieces(m.group(0)) for w in cut(p) if w.strip()) + " ",
            text,
        )
    return cut_long_words(text)


def segment(text: str) -> str:
    """Text with CJK runs split into words by spaces (search mode: a long word also yields its
    parts, so "北京烤鸭" matches "北京" and "烤鸭") and long words cut. Other text is returned
    unchanged."""
    return _spaced(text, lambda run: _jieba().cut_for_search(run))


def plain_words(text: str) -> list[str]:
    """Lowercased word tokens with CJK runs cut once each (jieba's precise mode: "无人机" stays one
    word, where search mode adds "人机"): the words a text says, for the offline engine's keywords."""
    return [w[:MAX_WORD_CHARS].lower() for w in _WORD.findall(_spaced(text, lambda run: _jieba().cut(run)))]


def tagged(text: str) -> list[tuple[str, str]]:
    """``(word, part of speech)`` pairs of a Chinese text (jieba's tags: ``r`` pronoun, ``n``
    noun, ``nr`` person, ``v`` verb, ``d`` adverb, ``t`` time, ...), for the offline engine's
    Chinese rules (who a clause is about); a long CJK run is tagged in pieces, as ``segment``
    cuts it."""
    _jieba()
    with _jieba_lock:
        import jieba.posseg

    return [(p.word, p.flag) for part in _parts(text) for p in jieba.posseg.cut(part) if p.word.strip()]


def _parts(text: str) -> list[str]:
    """``text`` split only inside CJK runs longer than ``SEGMENT_RUN_CHARS``, so that no part holds
    a longer run (most texts are one part)."""
    parts: list[str] = []
    start = 0
    for m in _CJK.finditer(text):
        if m.end() - m.start() <= SEGMENT_RUN_CHARS:
            continue
        pieces = _pieces(m.group(0))  # two or more: the last one goes on with the text after it
        parts += [text[start : m.start()] + pieces[0], *pieces[1:-1]]
        start = m.end() - len(pieces[-1])
    parts.append(text[start:])
    return parts


def words(text: str) -> list[str]:
    """Lowercased word tokens, CJK segmented, long words cut (a word of runs joined by
    apostrophes too: "a'a'a'..." is one token)."""
    return [w[:MAX_WORD_CHARS].lower() for w in _WORD.findall(segment(text))]


def query_terms(query: str, *, max_terms: int = 64) -> list[str]:
    """Distinct search terms of a query, stopwords removed (kept when nothing else is left)."""
    tokens = [t[:-2] if t.endswith("'s") else t for t in words(query)]
    kept = [
        t
        for t in tokens
        if t not in STOPWORDS and t not in CHINESE_STOPWORDS and (len(t) > 1 or t.isdigit() or has_cjk(t))
    ]
    chosen = kept or tokens
    return list(dict.fromkeys(chosen))[:max_terms]
