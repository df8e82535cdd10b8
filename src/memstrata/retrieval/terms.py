"""Text to search terms, the same way on the index side and the query side.

Words are lowercased Unicode word runs; a run of a script written without spaces is cut into
words by its language's pack (``memstrata.lang``: jieba for CJK, loaded when such text appears);
every pack's function words are dropped from queries. Stemming is left to the index (FTS5
Porter), which applies it to both sides.

Whatever a text holds, the work per word is bounded, so one long "word" (a base64 blob, a pasted
``AAAA...``, a CJK run without punctuation) costs what as many short ones would:
- a run of letters and digits longer than ``MAX_WORD_CHARS`` counts as its first
  ``MAX_WORD_CHARS`` (``cut_long_words``), on the index side (``segment``, which builds the FTS
  documents) and the query and judging sides (``words``, ``plain_words``) alike, so a cut query
  word still meets the cut indexed one. No English or Chinese word comes near the length; a sha256
  in hex (64) still counts whole. (Before, relevance scoring built every prefix of every word: one
  80,000-character word cost 2.5 GB.)
- a pack cuts an unspaced run in bounded pieces (jieba's time grows faster than linearly with a
  run's length: ``memstrata.lang.zh.words``).
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
from typing import TypeVar

import snowballstemmer

from memstrata import lang

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*", re.UNICODE)
MAX_WORD_CHARS = 64
JUDGED_CHARS = 4_000
# A run of word characters longer than MAX_WORD_CHARS, matched from its start only (the
# look-behind keeps the search from retrying inside every long run).
_LONG_RUN = re.compile(rf"(?<![^\W_])[^\W_]{{{MAX_WORD_CHARS + 1},}}")
T = TypeVar("T")

# The default language's function words (English): what the rules reading English phrasing skip.
STOPWORDS = lang.default().stopwords


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


def has_unspaced(text: str) -> bool:
    """Whether ``text`` holds a run of a script written without spaces (one a pack cuts)."""
    pattern = lang.runs().pattern
    return pattern is not None and pattern.search(text) is not None


def cut_long_words(text: str) -> str:
    """``text`` with every run of letters and digits longer than ``MAX_WORD_CHARS`` cut to its
    first ``MAX_WORD_CHARS``."""
    if len(text) <= MAX_WORD_CHARS:
        return text
    return _LONG_RUN.sub(lambda m: m.group(0)[:MAX_WORD_CHARS], text)


def judged(text: str) -> str:
    """The part of a text that is judged: its first ``JUDGED_CHARS`` characters."""
    return text if len(text) <= JUDGED_CHARS else text[:JUDGED_CHARS]


def _spaced(text: str, search: bool) -> str:
    """``text`` with each unspaced run replaced by its pack's words, between spaces, then long
    words cut (after: such a run is one word run to the cut, its words are not)."""
    runs = lang.runs()
    if runs.pattern is not None and runs.pattern.search(text) is not None:
        text = runs.pattern.sub(
            lambda m: " " + " ".join(w for w in runs.cut(m, search) if w.strip()) + " ", text
        )
    return cut_long_words(text)


def segment(text: str) -> str:
    """Text with unspaced runs split into words by spaces (search mode: a long word also yields its
    parts) and long words cut. Other text is returned unchanged."""
    return _spaced(text, True)


def plain_words(text: str) -> list[str]:
    """Lowercased word tokens with unspaced runs cut once each (precise mode: a long word stays one,
    where search mode adds its parts): the words a text says, for the offline engine's keywords."""
    return [w[:MAX_WORD_CHARS].lower() for w in _WORD.findall(_spaced(text, False))]


def words(text: str) -> list[str]:
    """Lowercased word tokens, unspaced runs cut, long words cut (a word of runs joined by
    apostrophes too: "a'a'a'..." is one token)."""
    return [w[:MAX_WORD_CHARS].lower() for w in _WORD.findall(segment(text))]


def query_terms(query: str, *, max_terms: int = 64) -> list[str]:
    """Distinct search terms of a query, stopwords removed (kept when nothing else is left)."""
    tokens = [t[:-2] if t.endswith("'s") else t for t in words(query)]
    stopwords = lang.stopwords()
    kept = [t for t in tokens if t not in stopwords and (len(t) > 1 or t.isdigit() or has_unspaced(t))]
    chosen = kept or tokens
    return list(dict.fromkeys(chosen))[:max_terms]
