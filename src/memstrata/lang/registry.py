"""The one table of language packs, and what the rest of memstrata asks of it.

Packs are registered at start-up (``memstrata.lang`` registers the bundled ones); everything
language-specific is asked here, never decided by a consumer: the language of a text, the union of
stopwords, the unspaced scripts and who cuts them, a pack by its code. What is derived from the
table (the union of stopwords, the run pattern) is computed once per change of the table.
Texts already cut and cached by the search (``retrieval.terms``) keep their old cut: register a
pack before texts are read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from memstrata.errors import ConfigError
from memstrata.lang.pack import Language

# Where an engine's rules for a language live: "package.module:attribute" (an entry point's value).
_ENTRY_POINT = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")

_packs: dict[str, Language] = {}
_default: list[str] = []  # the code of the language a text is in when no pack claims it
_generation = [0]


def register(pack: Language, *, default: bool = False) -> None:
    """Add ``pack``; ``default`` makes it the language of texts no other pack claims. This is the
    one registration a language needs: an engine with rules of its own for it finds them through
    ``pack.engines`` (only their form is checked here; the engine imports them when first asked)."""
    if pack.code in _packs:
        raise ConfigError(f"a language pack {pack.code!r} is registered already")
    if pack.unspaced and pack.cut is None:
        raise ConfigError(f"language pack {pack.code!r} names an unspaced script but no cut")
    for engine, where in pack.engines.items():
        if not _ENTRY_POINT.fullmatch(where):
            raise ConfigError(
                f"language pack {pack.code!r} names {where!r} for engine {engine!r}, not 'module:attribute'"
            )
    _packs[pack.code] = pack
    if default:
        _default[:] = [pack.code]
    _generation[0] += 1


def unregister(code: str) -> Language:
    """Remove the pack of ``code`` and return it (the default pack cannot go)."""
    if _default and code == _default[0]:
        raise ConfigError(f"language pack {code!r} is the default and cannot be removed")
    if code not in _packs:
        raise ConfigError(f"no language pack {code!r} is registered")
    _generation[0] += 1
    return _packs.pop(code)


def languages() -> tuple[Language, ...]:
    """Every registered pack, the default first, then in the order registered."""
    return tuple(sorted(_packs.values(), key=lambda p: p.code != default().code))


def default() -> Language:
    """The pack of texts no other pack claims."""
    return _packs[_default[0]]


def get(code: str) -> Language:
    """The pack of ``code``; the default pack for a language without one."""
    return _packs.get(code) or default()


def language_of(text: str) -> str:
    """The code of the first pack (in registration order) that claims ``text``, else the default's."""
    home = _default[0]
    for code, pack in _packs.items():
        if code != home and pack.claims(text):
            return code
    return home


def stopwords() -> frozenset[str]:
    """Every pack's stopwords: a query's function words, in whichever language it is."""
    return _derived(_generation[0]).stopwords


@dataclass(frozen=True, slots=True)
class Runs:
    """The unspaced scripts of all packs: ``pattern`` finds a run, ``cutter`` splits it."""

    pattern: re.Pattern[str] | None  # one group per pack, named ``p<i>``
    packs: tuple[Language, ...]

    def cut(self, m: re.Match[str], search: bool) -> Iterable[str]:
        """The words of the run ``m`` by the pack whose script it is."""
        pack = self.packs[int((m.lastgroup or "p0")[1:])]
        assert pack.cut is not None  # register refuses an unspaced script without a cut
        return pack.cut(m.group(0), search)


def runs() -> Runs:
    """The run pattern and cutters of the registered unspaced scripts."""
    return _derived(_generation[0]).runs


@dataclass(frozen=True, slots=True)
class _Derived:
    stopwords: frozenset[str]
    runs: Runs
    turns: dict[str, Language]
    turn_words: tuple[str, ...]
    sentence_ends: str
    colons: str


def turn_owner(word: str) -> Language:
    """The pack whose transcripts mark a turn with ``word`` (case-insensitive), else the default."""
    return _derived(_generation[0]).turns.get(word.lower()) or default()


def sentence_ends() -> str:
    """Every pack's sentence ends that need no space after them ("。！？")."""
    return _derived(_generation[0]).sentence_ends


def turn_words() -> tuple[str, ...]:
    """Every pack's turn markers, the default's first (the order a pattern tries them in)."""
    return _derived(_generation[0]).turn_words


def colons() -> str:
    """The colons a turn marker may end with: ":" and every pack's own ("：")."""
    return _derived(_generation[0]).colons


@lru_cache(maxsize=4)
def _derived(generation: int) -> _Derived:
    packs = tuple(p for p in _packs.values() if p.unspaced)
    alternatives = "|".join(f"(?P<p{i}>{p.unspaced}+)" for i, p in enumerate(packs))
    pattern = re.compile(alternatives) if packs else None
    union = frozenset().union(*(p.stopwords for p in _packs.values()))
    ordered = languages()
    turns = {w.lower(): p for p in reversed(ordered) for w in p.turn_words}
    words = tuple(w for p in ordered for w in p.turn_words)
    ends = "".join(p.sentence_ends for p in ordered)
    colons = ":" + "".join(c for p in ordered for c in p.colons if c != ":")
    return _Derived(union, Runs(pattern, packs), turns, words, ends, colons)
