"""The Markdown of an offline scene: a title, a lead paragraph, profile facts, preferences, a dated
timeline and instructions, each list chosen by priority (then recency) and capped, so a scene stays
readable however many atoms it holds (the index keeps every atom id)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memstrata.engines.offline import atom_text as st
from memstrata.engines.offline import user
from memstrata.engines.offline.packs import pack_of_atoms
from memstrata.models import Atom, AtomType

MAX_FACTS = 15
MAX_PREFERENCES = 10
MAX_EVENTS = 25
MAX_INSTRUCTIONS = 10
SUMMARY_KEYWORDS = 4


def title_of(name: str) -> str:
    """``family-plans.md`` -> ``Family plans``."""
    words = name.removesuffix(".md").replace("_", " ").replace("-", " ").split()
    return " ".join(words).capitalize() or "Scene"


def _top(atoms: Sequence[Atom], keep: Callable[[Atom], bool], limit: int) -> list[Atom]:
    """Up to ``limit`` atoms passing ``keep``, strict instructions and high priority first (quoted
    reactions last), newer first among equals, one per distinct statement."""
    ranked = sorted(
        (a for a in atoms if keep(a)), key=lambda a: (a.priority != -1, st.is_quoted(a), -a.priority, -a.seq)
    )
    seen: set[str] = set()
    out = []
    for a in ranked:
        key = st.fold(st.statement(a))
        if key and key not in seen:
            seen.add(key)
            out.append(a)
        if len(out) == limit:
            break
    return out


def _who(members: Sequence[Atom], limit: int, alias: str | None) -> str:
    return st.join_names(st.people(members, limit)) or alias or "the user"


def summary(name: str, members: Sequence[Atom], vocab: st.Vocabulary, alias: str | None = None) -> str:
    """One line: title, distinctive words, who, how many memories over which months (in the
    language most of the scene's memories are in); ``alias`` is the name a nameless user goes by."""
    words = vocab.keywords(members, SUMMARY_KEYWORDS, _title_words(name))
    written = pack_of_atoms(members).scene_summary(name, members, words)
    if written is not None:
        return written
    days = sorted(st.said_on(a) for a in members)
    who = _who(members, 2, alias)
    span = (
        f"{days[0]:%b %Y}"
        if days[0].replace(day=1) == days[-1].replace(day=1)
        else (f"{days[0]:%b %Y} to {days[-1]:%b %Y}")
    )
    topic = f"{title_of(name)}: {', '.join(words)}" if words else title_of(name)
    return f"{topic} ({who}; {len(members)} memories, {span})"


def body(name: str, members: Sequence[Atom], vocab: st.Vocabulary, alias: str | None = None) -> str:
    """The scene's Markdown body (``alias``: the name a nameless user goes by, see
    ``user.statement_as``; an atom that only gave the name is not shown)."""
    said = {a.id: user.statement_as(a, alias) for a in members}
    shown = [a for a in members if said[a.id]]
    facts = _top(shown, lambda a: a.type == AtomType.PERSONA and not st.is_preference(a), MAX_FACTS)
    prefs = _top(shown, st.is_preference, MAX_PREFERENCES)
    events = _top(shown, lambda a: a.type == AtomType.EPISODIC, MAX_EVENTS)
    rules = _top(shown, lambda a: a.type == AtomType.INSTRUCTION, MAX_INSTRUCTIONS)
    pack = pack_of_atoms(members)
    headings = pack.scene_headings
    opening = pack.scene_opening(name, members, vocab.keywords(members, 6, _title_words(name)))
    title, lead = opening or (title_of(name), _lead(name, members, vocab, alias))
    lines = [f"# {title}", "", lead]
    for heading, chosen in (("Profile", facts), ("Preferences", prefs), ("Instructions", rules)):
        if chosen:
            lines += [
                "",
                f"## {headings.get(heading, heading)}",
                "",
                *(f"- {said[a.id]}" for a in chosen),
            ]
    if events:
        dated = sorted(((st.when(a), a) for a in events), key=lambda x: (x[0][0], x[1].seq))
        lines += ["", f"## {headings.get('Timeline', 'Timeline')}", ""]
        lines += [f"- **{label}** {said[a.id]}" for (_, label), a in dated]
    count = len(facts) + len(prefs) + len(events) + len(rules)
    if count < len(members):
        note = pack.shown_note(count, len(members))
        lines += [
            "",
            note or f"_{count} of {len(members)} memories shown; the scene index lists every atom id._",
        ]
    return "\n".join(lines)


def _title_words(name: str) -> frozenset[str]:
    return frozenset(title_of(name).lower().split())


def _lead(name: str, members: Sequence[Atom], vocab: st.Vocabulary, alias: str | None) -> str:
    words = vocab.keywords(members, 6, _title_words(name))
    who = _who(members, 3, alias)
    days = sorted(st.said_on(a) for a in members)
    about = f" ({', '.join(words)})" if words else ""
    return (
        f"What {who} said about {title_of(name).lower()}{about}: {len(members)} memories "
        f"from {days[0]:%-d %B %Y} to {days[-1]:%-d %B %Y}."
    )
