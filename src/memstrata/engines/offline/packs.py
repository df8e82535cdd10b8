"""The offline engine's table of language packs: its writing rules per language.

A language's general rules (how a text is recognised, its words, recall's wording) are its pack in
``memstrata.lang``; what the offline engine does differently in it is the engine's pack (a
``Rules``), which the language's pack names (``engines={"offline": "module:attribute"}``). This
table is derived from that registry: nothing registers here, the engine imports a language's
engine pack when it first meets the language, and a pack registered anew is looked up anew. A
consumer here (extraction, the scene and persona writers, ``atom_text``) asks this table for the
pack of a text or of atoms and calls its hooks, never a language by name. Every hook of ``Rules``
answers ``None``: "the engine's own rules" (those of ``l1/``, ``l2/``, ``l3/``, written for
English), so a pack overrides what its language does differently, and a language that names no
engine pack is written by the default language's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from types import MappingProxyType

from memstrata import lang
from memstrata.engines.offline.draft import Parts, language_of_atoms
from memstrata.engines.offline.l1.classify import Kind
from memstrata.engines.offline.l1.context import Speech
from memstrata.engines.offline.l1.dates.span import Resolved
from memstrata.errors import ConfigError
from memstrata.models import Atom, Message
from memstrata.ports import PersonaRequest


@dataclass(frozen=True, slots=True)
class Found:
    """One atom of a message found by a pack's own extraction, before the pack writes it."""

    parts: Parts
    kind: Kind
    resolved: Resolved | None
    scene: str


class Rules:
    """An engine pack: the framing words of atoms (``write``) and the hooks below, each ``None``
    (or empty) for "the engine's own rule"."""

    code = ""  # the language's code in ``memstrata.lang``, recorded on every atom it writes
    preference: re.Pattern[str] | None = None  # what makes a persona atom a preference
    topic_names: frozenset[str] = frozenset()  # scene names that are topics, in this language
    scene_headings: Mapping[str, str] = MappingProxyType({})  # "Profile" -> this language's

    def write(self, parts: Parts) -> str:
        """The atom's text for ``parts``: the framing words are the pack's, the content is not
        changed (it was rewritten and dated before)."""
        raise NotImplementedError

    def message_atoms(self, context: Sequence[Message], i: int, sp: Speech) -> Sequence[Found] | None:
        """The atoms of message ``i`` by this language's own extraction, or None for ``l1/``'s."""
        return None

    def atom_words(self, a: Atom, skip: frozenset[str]) -> frozenset[str] | None:
        """An atom's content words (scene keywords and topics), or None for ``atom_text``'s."""
        return None

    def scene_summary(self, name: str, members: Sequence[Atom], words: Sequence[str]) -> str | None:
        """A scene's one-line summary, or None for ``l2/render``'s."""
        return None

    def scene_opening(
        self, name: str, members: Sequence[Atom], words: Sequence[str]
    ) -> tuple[str, str] | None:
        """A scene page's title and lead line, or None for ``l2/render``'s."""
        return None

    def shown_note(self, shown: int, total: int) -> str | None:
        """The note under a scene page that shows ``shown`` of ``total`` memories, or None."""
        return None

    def persona(self, request: PersonaRequest, max_chars: int, instructions_share: float) -> str | None:
        """The persona body, or None for ``l3/writer``'s."""
        return None


ENGINE = "offline"  # this engine's name in a language pack's ``engines``

# The rules found for each language, beside the pack they were found through: a pack registered
# anew (another object under the same code) is looked up again.
_found: dict[str, tuple[lang.Language, Rules | None]] = {}
_topics: list[tuple[tuple[lang.Language, ...], frozenset[str]]] = []


def _load(language: lang.Language) -> Rules | None:
    """The engine pack ``language`` names for this engine (imported now), or None."""
    where = language.engines.get(ENGINE)
    if where is None:
        return None
    try:
        rules = EntryPoint(language.code, where, f"memstrata.engines.{ENGINE}").load()
    except (ImportError, AttributeError) as e:
        raise ConfigError(
            f"language pack {language.code!r}: no offline engine pack at {where!r} ({e})"
        ) from e
    if not isinstance(rules, Rules) or rules.code != language.code:
        raise ConfigError(f"language pack {language.code!r}: {where!r} is not an offline engine pack of it")
    return rules


def _own(language: lang.Language) -> Rules | None:
    """The engine pack of ``language`` itself, None when it names none."""
    found = _found.get(language.code)
    if found is None or found[0] is not language:
        found = (language, _load(language))
        _found[language.code] = found
    return found[1]


def pack_of(code: str) -> Rules:
    """The engine pack of a language, the default language's for one without its own."""
    own = _own(lang.get(code))
    if own is not None:
        return own
    home = _own(lang.default())
    if home is None:
        raise ConfigError(f"the default language pack {lang.default().code!r} names no offline engine pack")
    return home


def pack_for(text: str) -> Rules:
    """The pack for a message's text (a mixed conversation switches message by message)."""
    return pack_of(lang.language_of(text))


def pack_of_atoms(atoms: Iterable[Atom]) -> Rules:
    """The pack of the language most of ``atoms`` are in: a scene or a persona is written in it."""
    return pack_of(language_of_atoms(atoms))


def topic_names() -> frozenset[str]:
    """Every registered language's engine pack's scene topic names."""
    languages = lang.languages()
    if _topics and _same(_topics[0][0], languages):
        return _topics[0][1]
    names = frozenset[str]().union(*(pack_of(p.code).topic_names for p in languages))
    _topics[:] = [(languages, names)]
    return names


def _same(a: tuple[lang.Language, ...], b: tuple[lang.Language, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
