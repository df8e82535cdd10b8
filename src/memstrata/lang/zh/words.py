"""Chinese words: what makes a text Chinese, its function words, and jieba's cut of its runs.

jieba is loaded lazily, the first time a CJK run is cut (its dictionary takes a second to load),
and sees a run in pieces of at most ``SEGMENT_RUN_CHARS`` characters: its time grows faster than
linearly with a run's length (a run of 200,000 characters took 348 s, in pieces of 100 under 5 s).
A word split by a piece's edge is lost; a sentence that long without punctuation is not prose.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

# The scripts jieba cuts: Han (with its extensions and compatibility block), kana and Hangul.
UNSPACED = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]"
_RUN = re.compile(UNSPACED + "+")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
SEGMENT_RUN_CHARS = 100
_jieba_lock = threading.Lock()

# Chinese function words and chat particles: they say nothing a memory is about. Shared by the
# offline engine (content words, scene keywords) and kept out of query terms.
STOPWORDS = frozenset(
    """
    的 了 是 在 我 你 他 她 它 我们 你们 他们 她们 这 那 这个 那个 这些 那些 就 都 也 还 又 和 跟 与 及
    吗 呢 吧 啊 呀 哦 嗯 哈 哈哈 啦 嘛 么 着 过 被 把 给 让 对 从 向 到 为 为了 因为 所以 但是 但 而且
    可是 如果 虽然 一个 一些 一下 一点 有点 什么 怎么 怎么样 哪 哪里 哪儿 谁 多少 几 很 太 挺 非常
    真 真的 比较 最 更 没 没有 不 不是 有 会 能 可以 要 想 觉得 知道 说 刚 刚刚 已经 正在 还是 或者
    然后 其实 就是 这样 那样 自己 一直 现在 时候 东西 事情 好 好的 对了 顺便
    """.split()
)


def claims(text: str) -> bool:
    """Chinese when Chinese characters carry the text (about two characters make a word):
    "我在Google工作" is Chinese, "I love 北京烤鸭" is not."""
    han = len(_HAN.findall(text))
    return han >= 2 and han / 2 > len(_LATIN_WORD.findall(text))


def has_han(text: str) -> bool:
    """Whether ``text`` holds a character jieba cuts (Han, kana, Hangul)."""
    return _RUN.search(text) is not None


@lru_cache(maxsize=1)
def _jieba() -> Any:
    with _jieba_lock:
        import jieba

        jieba.setLogLevel(60)  # its start-up chatter goes to stderr otherwise
        return jieba


def pieces(run: str) -> list[str]:
    """A CJK run in the pieces jieba is given (at most ``SEGMENT_RUN_CHARS`` each)."""
    return [run[i : i + SEGMENT_RUN_CHARS] for i in range(0, len(run), SEGMENT_RUN_CHARS)]


def cut(run: str, search: bool) -> Iterable[str]:
    """The words of a CJK run, piece by piece: precise mode ("无人机" stays one word), or search
    mode (a long word also yields its parts: "北京烤鸭" gives "北京" and "烤鸭" too)."""
    jieba = _jieba()
    work = jieba.cut_for_search if search else jieba.cut
    return [w for p in pieces(run) for w in work(p)]


def tagged(text: str) -> list[tuple[str, str]]:
    """``(word, part of speech)`` pairs of a Chinese text (jieba's tags: ``r`` pronoun, ``n``
    noun, ``nr`` person, ``v`` verb, ``d`` adverb, ``t`` time, ...), for the offline engine's
    Chinese rules (who a clause is about); a long CJK run is tagged in pieces, as ``cut`` cuts it."""
    _jieba()
    with _jieba_lock:
        import jieba.posseg

    return [(p.word, p.flag) for part in _parts(text) for p in jieba.posseg.cut(part) if p.word.strip()]


def _parts(text: str) -> list[str]:
    """``text`` split only inside CJK runs longer than ``SEGMENT_RUN_CHARS``, so that no part holds
    a longer run (most texts are one part)."""
    parts: list[str] = []
    start = 0
    for m in _RUN.finditer(text):
        if m.end() - m.start() <= SEGMENT_RUN_CHARS:
            continue
        split = pieces(m.group(0))  # two or more: the last one goes on with the text after it
        parts += [text[start : m.start()] + split[0], *split[1:-1]]
        start = m.end() - len(split[-1])
    parts.append(text[start:])
    return parts
