"""The language-neutral parts of an offline atom, and how L2 and L3 read them back.

The extractor decides *what* an atom says (its form, speaker, the asker of a question, the answer
span, the resolved time); a language pack (``lang/``) writes the text last. The parts travel in
the atom's metadata (``form``, ``lang``, ``asker``, ``statement``), so the scene and persona
writers read fields instead of parsing framing words such as "X said:" back out of the text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from memstrata import lang
from memstrata.models import Atom


class Form(StrEnum):
    """How an atom frames what it holds."""

    STATEMENT = "statement"  # a fact with its subject named ("Maya moved to Lisbon")
    QUOTE = "quote"  # what a speaker said that is not about the speaker ("Maya said: ...")
    ANSWER = "answer"  # a question and its answer, stored together
    PHOTO = "photo"  # a shared photo's caption
    INSTRUCTION = "instruction"  # a rule the user gave the assistant
    CONFIRMED = "confirmed"  # what the assistant stated back about the user


@dataclass(frozen=True, slots=True)
class Parts:
    """What one atom says, before any language writes it.

    ``text`` is the statement (already rewritten: people named, dates resolved), the quoted words,
    the answer, the caption or the instruction; ``question`` and ``asker`` only for ``ANSWER``."""

    form: Form
    speaker: str
    text: str
    asker: str = ""
    question: str = ""


FORM, LANG, ASKER, STATEMENT = "form", "lang", "asker", "statement"
# Atoms stored before the parts were recorded say "Mel asked: ... Caroline answered: ..." and
# "Mel said: ..."; only those are read from their text (no new atom is).
_LEGACY_QA = re.compile(r"^\s*[^:]{1,40}? asked: .*? [^\s:]{1,40} answered: (?P<answer>.+)$", re.DOTALL)
_LEGACY_QUOTE = re.compile(r"^\s*[^\s:]{1,40} said: (?P<said>.+)$", re.DOTALL)


def parts_metadata(parts: Parts, code: str) -> dict[str, str]:
    """The metadata fields that carry ``parts`` (the speaker has its own key already)."""
    out = {FORM: parts.form.value, LANG: code, STATEMENT: parts.text}
    if parts.asker:
        out[ASKER] = parts.asker
    return out


def form_of(a: Atom) -> Form:
    """The atom's form: its recorded field, else (an older atom) what its text shows."""
    recorded = a.metadata.get(FORM)
    if isinstance(recorded, str) and recorded in Form.__members__.values():
        return Form(recorded)
    if _LEGACY_QA.match(a.content):
        return Form.ANSWER
    if _LEGACY_QUOTE.match(a.content):
        return Form.QUOTE
    return Form.INSTRUCTION if a.type == "instruction" else Form.STATEMENT


def core_text(a: Atom) -> str:
    """What the atom says without its framing: the answer, the quoted words, the statement. A
    recorded statement the content no longer holds (an edit or a merge rewrote it) gives way to
    the content."""
    text = " ".join(a.content.split())
    recorded = a.metadata.get(STATEMENT)
    if isinstance(recorded, str) and recorded.strip() and FORM in a.metadata:
        said = " ".join(recorded.split())
        return said if said in text else text
    legacy = _LEGACY_QA.match(text) or _LEGACY_QUOTE.match(text)
    return legacy.group(1).strip() if legacy else text


def lang_of(a: Atom) -> str:
    """The language pack that wrote the atom (the default language for atoms that do not say)."""
    code = a.metadata.get(LANG)
    return code if isinstance(code, str) and code else lang.default().code


def language_of_atoms(atoms: Iterable[Atom]) -> str:
    """The language most of ``atoms`` were written in (the default language on a tie with it or
    when there are none): a scene or a persona is written in it."""
    home = lang.default().code
    counts = Counter(lang_of(a) for a in atoms)
    if not counts:
        return home
    best = max(counts.values())
    return home if counts.get(home, 0) == best else min(k for k, v in counts.items() if v == best)
