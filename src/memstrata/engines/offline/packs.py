"""The offline engine's table of language packs: its writing rules per language.

A language's general rules (how a text is recognised, its words, recall's wording) are its pack in
``memstrata.lang``; what the offline engine does differently in it is the engine's pack, keyed by
the same code and registered in ``engines/offline/lang``. A consumer here (extraction, the scene
and persona writers, ``atom_text``) asks this table for the pack of a text or of atoms and calls
its hooks, never a language by name. Every hook of ``Rules`` answers ``None``: "the engine's own
rules" (those of ``l1/``, ``l2/``, ``l3/``, written for English), so a pack overrides what its
language does differently, and a language with no engine pack is written by those rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from memstrata import lang
from memstrata.engines.offline.draft import Parts, language_of_atoms
from memstrata.engines.offline.l1.classify import Kind
from memstrata.engines.offline.l1.context import Speech
from memstrata.engines.offline.l1.dates import Resolved
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


_table: dict[str, Rules] = {}


def register(rules: Rules) -> None:
    """Add an engine pack; its code must be a language of ``memstrata.lang``."""
    if rules.code in _table:
        raise ConfigError(f"an offline engine pack {rules.code!r} is registered already")
    if lang.get(rules.code).code != rules.code:
        raise ConfigError(f"no language pack {rules.code!r} in memstrata.lang for the engine pack")
    _table[rules.code] = rules


def unregister(code: str) -> Rules:
    """Remove the engine pack of ``code`` (its language is then written by the default rules)."""
    if code == lang.default().code or code not in _table:
        raise ConfigError(f"no removable offline engine pack {code!r}")
    return _table.pop(code)


def pack_of(code: str) -> Rules:
    """The engine pack of a language, the default language's for one without its own."""
    return _table.get(code) or _table[lang.default().code]


def pack_for(text: str) -> Rules:
    """The pack for a message's text (a mixed conversation switches message by message)."""
    return pack_of(lang.language_of(text))


def pack_of_atoms(atoms: Iterable[Atom]) -> Rules:
    """The pack of the language most of ``atoms`` are in: a scene or a persona is written in it."""
    return pack_of(language_of_atoms(atoms))


def topic_names() -> frozenset[str]:
    """Every pack's scene topic names."""
    return frozenset().union(*(p.topic_names for p in _table.values()))
