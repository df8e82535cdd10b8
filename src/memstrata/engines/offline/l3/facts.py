"""The facts a persona profile is made of: standing facts per person, sorted into sections, scored
by salience, without repeats.

A fact is a persona atom's statement (a question-and-answer atom gives its answer), or a plan
(an episodic atom about something still to come when it was said) while it is still to come: a
plan whose day has passed is an event, and events live in the scenes. Quoted reactions ("Mel said: so true") and fragments that lean on the
sentence before ("It was great") are no facts. Salience: the atom's priority, how factual it
reads (about its person, with names, numbers and plain "is a / has / works / lives" verbs rather
than feelings), how many other memories say something close (a fact said often matters), how
much of it is content rather than filler, brevity and recency.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from memstrata.engines.offline import atom_text as st
from memstrata.engines.offline.draft import Form, core_text, form_of
from memstrata.engines.offline.l1.dates.daymath import month_text
from memstrata.engines.offline.lexicon import GENERIC, STOPWORDS
from memstrata.models import Atom, AtomType

_I = re.IGNORECASE
# Sections in the order the profile shows them; a fact goes to the first whose words it has.
SECTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "Health",
        re.compile(
            r"\b(?:allerg\w*|intoleran\w*|vegetarian|vegan|diet|diabet\w*|asthma|celiac|coeliac|injur\w*|"
            r"surgery|therapy|therapist|anxiety|depression|illness|medication|pregnan\w*|disabilit\w*)\b",
            _I,
        ),
    ),
    (
        "Work and education",
        re.compile(
            r"\b(?:job|jobs|work|works|worked|working|career|company|startup|business|boss|colleague\w*|"
            r"co-?workers?|office|engineer\w*|employ\w*|hired|promot\w*|freelanc\w*|profession\w*|"
            r"student|studies|studying|school|college|university|degree|graduat\w*|internship|teacher)\b",
            _I,
        ),
    ),
    (
        "Home",
        re.compile(
            # "lives in", not "living the dream"
            r"\b(?:(?:lives?|lived|living)\s+(?:in|at|with|near|on|alone|abroad|together)|moved|moving|"
            r"house|apartment|flat|neighbou?rhood|hometown|home country|grew up|born in|is from)\b",
            _I,
        ),
    ),
    (
        "Family and relationships",
        re.compile(
            r"\b(?:husband|wife|partner|boyfriend|girlfriend|fianc\w*|spouse|married|engaged|divorced|sons?|"
            r"daughters?|kids?|children|child|baby|mom|mum|mother|dad|father|parents?|sisters?|brothers?|"
            r"siblings?|grand\w+|aunt|uncle|cousins?|niece|nephew|family|friends?|bff|roommate)\b",
            _I,
        ),
    ),
    ("Pets", re.compile(r"\b(?:dogs?|cats?|pets?|pupp(?:y|ies)|kittens?|turtles?|horses?|hamsters?)\b", _I)),
    (
        "Identity",
        # "faith", not "faith in Jon" (trust)
        re.compile(
            r"\b(?:years old|identif\w*|transgender|trans|queer|religio\w*|faith(?!\s+in\b)|church)\b", _I
        ),
    ),
    (
        "Plans",
        re.compile(r"\b(?:plans?|planning|going to|gonna|will|wants? to|hopes? to|dreams?|goals?)\b", _I),
    ),
)
PREFERENCES = "Preferences"  # what the person said they prefer or avoid: the assistant keeps to it
LIKES = "Likes"
OTHER = "Also"
_LEANS = re.compile(
    r"^(?:it|it's|that|that's|this|these|those|they|they're|them|there|here|we|we're|so|but|and)\b", _I
)
# A photo being shown ("Check out this pic of ...", "The photo is from ..."): talk about a picture,
# not a fact about its person.
_SHOWS = re.compile(
    r"^(?:check out|look at|here's|here is)\b|\b(?:this|the|that) (?:pic|picture|photo|snap|shot)\b", _I
)
# Doing something with one's family or friends is an activity, not a relationship.
_WITH_PEOPLE = re.compile(
    r"\bwith (?:\w+'s |his |her |their |my )?(?:family|fam|friends|kids)(?: and (?:\w+'s )?(?:family|friends|kids))?\b",
    _I,
)
_FILLER = re.compile(r"(,?)\s*\b(?:by the way|btw|honestly|actually|basically|you know)\b(,?)", _I)
_ANSWER_WORD = re.compile(r"^(?:yes|yeah|yep|yup|no|nope|sure|definitely|absolutely)\b[,.!]*\s*", _I)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")
MAX_FACT_CHARS = 160
_FACTUAL = re.compile(
    r"\b(?:is|are|was) (?:a|an)\b|\b(?:has|have|had) (?:a|an|two|three|four|\d+)\b|\b(?:named|called)\b|"
    r"\bworks?\b|\blives?\b|\bfrom\b|\bowns?\b|\bsince\b|\byears old\b",
    _I,
)
# Feelings and praise: what makes a memory warm, not what makes it a fact about someone.
_FEELING = re.compile(
    r"\b(?:love[sd]?|loving|joy\w*|lucky|thankful|grateful|awesome|amazing|great|happy|special|motivat\w*|"
    r"inspir\w*|support\w*|strength|peace\w*|bless\w*|rocks?|wonderful|fun|rewarding|precious|cherish\w*|"
    r"proud|glad|excited|fantastic|incredible|beautiful|meaningful|means a lot)\b",
    _I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# "<A> knows <B> loves live music", "<A> said: <B> and company look great": what A knows or thinks
# of B, a fact of neither A's profile nor (second hand) B's.
_REPORTS = re.compile(
    r"^(\w+) (?:knows|thinks|heard|hears|remembers|believes|guesses|bets|says|said|told|feels):?"
    r"(?: that)? (\w+)\b",
    _I,
)
_VAGUE = re.compile(r"\b(?:it|them|that|this|those|these|one)\b", _I)  # leans on what came before
_PROPER = re.compile(r"(?<=\s)[A-Z][a-z]+|\b\d+\b")


@dataclass(frozen=True, slots=True)
class Fact:
    """One line of the profile: its text, section, salience and the atom it comes from."""

    text: str
    section: str
    score: float
    terms: frozenset[str]
    atom: Atom


def _terms(text: str, skip: frozenset[str]) -> frozenset[str]:
    words = (w.lower().removesuffix("'s") for w in _WORD.findall(text))
    return frozenset(
        w for w in words if len(w) > 2 and w not in STOPWORDS and w not in GENERIC and w not in skip
    )


def clean(text: str) -> str:
    """A statement without fillers, on one line: its first sentence when that says enough, cut at a
    clause boundary near ``MAX_FACT_CHARS``."""
    text = " ".join(_FILLER.sub(lambda m: "," if m.group(1) and m.group(2) else "", text).split())
    first = _SENTENCE_END.split(text, 1)[0]
    if first != text and len(_terms(first, frozenset())) >= 3:
        text = first
    if len(text) > MAX_FACT_CHARS:
        head = text[:MAX_FACT_CHARS]
        stop = max(head.rfind(", "), head.rfind("; "), head.rfind(" - "), head.rfind(". "))
        text = head[:stop] if stop > MAX_FACT_CHARS // 2 else head[: head.rfind(" ")] + "…"
    return text.rstrip(" ,;-.!")


def is_stated_preference(atom: Atom) -> bool:
    """An atom the extractor marked as a preference its person stated ("I avoid gluten")."""
    return atom.metadata.get("preference") is True


def section_of(text: str, atom: Atom) -> str:
    if is_stated_preference(atom):
        return PREFERENCES
    if st.is_preference(atom):
        return LIKES
    bare = _WITH_PEOPLE.sub("", text)
    return next((name for name, pattern in SECTIONS if pattern.search(bare)), OTHER)


def _start(atom: Atom) -> str:
    return str(atom.metadata.get("activity_start") or "")[:10]


def is_plan(atom: Atom) -> bool:
    """An episodic atom about something still to come when it was said."""
    return _start(atom) > st.said_on(atom).isoformat() and atom.priority >= 55


def _text(atom: Atom) -> str | None:
    """The fact an atom states, or None when it states none (a question, a reaction, a fragment)."""
    statement = st.statement(atom)
    text = _ANSWER_WORD.sub("", statement)
    if st.is_quoted(atom):
        text = core_text(atom)  # "Maya said: Tom is moving ..." keeps what was said ...
        if len(_terms(text, frozenset())) < 4:
            return None  # ... unless it is a reaction ("Mel said: that sounds great!")
    short_answer = form_of(atom) is Form.ANSWER and statement == " ".join(atom.content.split())
    if short_answer or _LEANS.match(text) or _SHOWS.search(text):
        return None  # an answer too short to stand without its question
    if text.rstrip().endswith(":"):
        return None  # it announces what followed it ("if the user has a button like this:"), not here
    return clean(text[:1].upper() + text[1:])


def candidates(
    atoms: Sequence[Atom], events: Sequence[Atom], skip: frozenset[str], today: date | None = None
) -> list[Fact]:
    """Every usable fact of ``atoms`` (persona) and ``events`` (plans still to come on ``today``),
    scored."""
    chosen = [a for a in atoms if a.type == AtomType.PERSONA]
    chosen += [a for a in events if is_plan(a) and (today is None or _start(a) >= today.isoformat())]
    pairs = [(a, t) for a in chosen if (t := _text(a)) is not None]
    chosen = [a for a, _ in pairs]
    texts = [t for _, t in pairs]
    terms = [_terms(t, skip) for t in texts]
    newest = max((a.seq for a in chosen), default=1) or 1
    out = []
    for i, (a, text) in enumerate(zip(chosen, texts, strict=True)):
        if len(terms[i]) < 2 or reports_on_another(text, skip) or reports_on_another(st.statement(a), skip):
            continue
        support = sum(1 for j, other in enumerate(terms) if j != i and len(terms[i] & other) >= 2)
        density = len(terms[i]) / max(1, len(_WORD.findall(text)))
        score = a.priority + 3 * min(support, 3) + 20 * density + 5 * a.seq / newest + _factual(text, skip)
        section = "Plans" if a.type == AtomType.EPISODIC else section_of(text, a)
        out.append(Fact(text, section, score, terms[i], a))
    return out


def reports_on_another(text: str, people: frozenset[str]) -> bool:
    """Whether ``text`` is one person saying what they know or think of another of ``people``."""
    m = _REPORTS.match(text)
    if m is None:
        return False
    who, about = m.group(1).lower(), m.group(2).lower().removesuffix("'s")
    return who in people and about in people and about != who


def _factual(text: str, people: frozenset[str]) -> float:
    """How much a statement reads as a fact about someone rather than a feeling."""
    about = 8.0 if text.split(" ", 1)[0].removesuffix("'s").lower() in people else 0.0
    names = {m.group() for m in _PROPER.finditer(text)} - {p.capitalize() for p in people}
    feelings = len(_FEELING.findall(text))
    vague = len(_VAGUE.findall(text))
    return (
        about
        + 8 * bool(_FACTUAL.search(text))
        + 4 * min(len(names), 3)
        - 6 * feelings
        - 4 * vague
        - len(text) / 40
    )


def distinct(facts: Sequence[Fact], overlap: float = 0.7) -> list[Fact]:
    """Best first, without a fact whose content words are mostly in a better one."""
    kept: list[Fact] = []
    for f in sorted(facts, key=lambda f: (-f.score, f.atom.seq)):
        if not any(len(f.terms & k.terms) >= overlap * min(len(f.terms), len(k.terms)) for k in kept):
            kept.append(f)
    return kept


def dated(fact: Fact) -> str:
    """The fact's text with the month it was said ("(March 2026)") unless it names a year: any fact
    can change (likes too), and the agent needs to know how old it is. Dating every fact, not only
    work, home, family, health and plans, measured better on the dev set even though fewer fit
    (answer words in recall's context 76.1 -> 77.0%)."""
    if _YEAR.search(fact.text):
        return fact.text
    said: date = st.said_on(fact.atom)
    return f"{fact.text} ({month_text(said)})"
