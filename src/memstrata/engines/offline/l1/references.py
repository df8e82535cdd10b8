"""English words that lean on what was said before, made to stand alone: "here"/"there" become the
place the same message or the two before named, an object "it" the thing the sentence before was
about, and discourse fillers ("by the way") go. Only when the reading is unambiguous (one place,
one thing); otherwise the words are kept.

Written from the atoms a newcomer met: "Maya moved here from Porto" (here = Lisbon, named in her
message before), "Maya is migrating it to Dagster" (it = the Airflow pipeline that broke),
"Maya is allergic to peanuts, by the way, so ...".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memstrata.engines.offline.lexicon import MONTHS, WEEKDAYS

_I = re.IGNORECASE
# A place named after a preposition: "a startup in Lisbon", "we flew to New York".
_PLACE = re.compile(
    r"\b(?:in|to|at|from|near|around|visit(?:ed|ing)?)\s+([A-Z][a-zà-ÿ'-]+(?:\s[A-Z][a-zà-ÿ'-]+){0,2})"
)
_NOT_PLACES = frozenset(m.capitalize() for m in (*MONTHS, *WEEKDAYS)) | frozenset(
    "I The A An My Our Your His Her Their This That Christmas Easter".split()
)
# "here"/"there" as a place; not "there is", "hi there", "here's", "here and there", "there you go".
_DEICTIC = re.compile(
    r"(?<!\bhi )(?<!\bhey )(?<!\bover )\b(?P<word>here|there)\b(?!'s|\s+(?:is|are|was|were|will|would|has|have|had|"
    r"must|might|may|seems?|goes|you|and)\b)",
    _I,
)
_TOWARDS = re.compile(
    r"\b(?:moved?|moving|moves|came|come|coming|comes|back|went|go|going|goes|got|get|flew|fly|"
    r"drove|drive|travel\w*|headed|heading|return\w*|relocat\w*)\s*$",
    _I,
)
# The sentence before names a thing as its subject: "My Airflow pipeline broke again".
_THING = re.compile(
    r"^(?P<det>my|our|the)\s+(?P<np>(?:[\w-]+\s){0,2}[\w-]+?)\s+(?:is|was|has|had|broke|\w+ed)\b",
    _I,
)
# "it" as an object, right after a verb: "migrating it to", "fixed it" (not "the hang of it").
_OBJECT_IT = re.compile(
    r"\b(?P<verb>[a-z]+(?:ing|ed)|fix|move|sell|sold|bought|buy|replace|rebuild|rebuilt|rewrite|rewrote|port)"
    r" it\b(?!'s|\s+(?:is|was|will|has|had|would|seems|looks|feels)\b)"
)
FILLERS = re.compile(r"(,?)\s*\b(?:by the way|btw|anyway|anyways)\b(,?)", _I)


def places(texts: Iterable[str], people: Iterable[str] = ()) -> set[str]:
    """The places ``texts`` name (capitalised words after in/to/at/from), people's names aside."""
    skip = {p.lower() for p in people}
    found = {m.group(1) for t in texts for m in _PLACE.finditer(t)}
    return {p for p in found if p.split()[0] not in _NOT_PLACES and p.lower() not in skip}


def resolve_place(sentence: str, candidates: set[str]) -> str:
    """``sentence`` with a place "here"/"there" replaced by the one candidate place ("moved here"
    -> "moved to Lisbon", "live there" -> "live in Lisbon"); unchanged unless exactly one."""
    if len(candidates) != 1:
        return sentence
    (place,) = candidates
    if place in sentence:
        return sentence

    def swap(m: re.Match[str]) -> str:
        before = sentence[: m.start()]
        if before.rstrip().lower().endswith(("from", "to", "in", "at", "near")):
            return place
        return f"to {place}" if _TOWARDS.search(before) else f"in {place}"

    return _DEICTIC.sub(swap, sentence, count=1)


def thing_before(previous: str) -> str | None:
    """The thing the previous sentence is about, as "the <noun phrase>" (or the speaker's, for
    "my"), when it opens with one: "My Airflow pipeline broke" -> ("my", "Airflow pipeline")."""
    m = _THING.match(previous.strip())
    if m is None or any(w.lower() in ("i", "it", "you", "we", "they") for w in m.group("np").split()):
        return None
    return f"{m.group('det').lower()} {m.group('np')}"


def resolve_it(sentence: str, thing: str | None) -> str:
    """``sentence`` with its one object "it" replaced by ``thing``; unchanged when it has none or
    more than one (then which "it" is which is not clear)."""
    if thing is None or len(_OBJECT_IT.findall(sentence)) != 1 or re.search(r"\bit\b", sentence, _I) is None:
        return sentence
    if len(re.findall(r"\bit\b", sentence, _I)) != 1:
        return sentence
    return _OBJECT_IT.sub(lambda m: f"{m.group('verb')} {thing}", sentence, count=1)


def drop_fillers(text: str) -> str:
    """``text`` without discourse fillers: "allergic to peanuts, by the way, so I skip" ->
    "allergic to peanuts, so I skip"."""
    out = FILLERS.sub(lambda m: "," if m.group(1) and m.group(2) else "", text)
    return " ".join(out.split()).replace(" ,", ",")
