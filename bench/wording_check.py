"""How naturally a store's personas and scene files speak of the user: the lines that read wrong,
counted by shape.

    python bench/wording_check.py STORE [STORE ...] [--rebuild] [--show N]

STORE is a memory's home (SQLite and files). With ``--rebuild`` every tenant's scenes and persona
are written again by this checkout first (``rebuild_scenes``: it writes into STORE, so pass a copy).
Each fact of a persona (its bullets split at "; ") and each line of a scene body is checked; code
spans and quoted text are left out, since they keep the speaker's own words. The shapes:

- agreement: "the user"/the user's name before a base verb ("the user prefer", "Ana have"), except
  where a base form is right ("help the user understand", "can the user go", "to");
- first person: I, me, my, mine, myself and their contractions;
- capital User: "User" inside a sentence (not in a title: "the User Guide");
- doubled: "the user the user", "Ana Ana", "Ana is Ana";
- naming: "the user is Ana" / "the user's name is Ana" kept as a fact when Ana is the user's name;
- nameless under a name: "the user" in a profile whose user goes by a name;
- announces: a line ending in ":" ("if the user has a button like this:"), what it announced gone.
"""

from __future__ import annotations

import argparse
import os
import re
from collections import Counter
from pathlib import Path

SHAPES = (
    "agreement",
    "first person",
    "capital User",
    "doubled",
    "naming",
    "nameless under a name",
    "announces",
)
# Base forms that are right after a subject in these places (object of a causative, inversion).
_BASE_OK_BEFORE = frozenset(
    """
    help helps helped helping let lets letting make makes made making have has had having watch see
    saw hear can could will would shall should may might must do does did didn't doesn't don't to
    cannot can't couldn't won't wouldn't shouldn't why
    """.split()
)
_IRREGULAR = frozenset("are am were have do go don't haven't aren't weren't".split())
_QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"|“[^”]*”")
_FIRST = re.compile(r"\b(?:I|me|my|mine|myself|I'm|I've|I'd|I'll)(?![\w'-])")
_CAPITAL_USER = re.compile(r"(?<=[a-z,;] )User\b(?! [A-Z])")  # not a title ("the User Guide")


def _base_verbs() -> frozenset[str]:
    from memstrata.engines.offline.lexicon import BASE_VERBS

    return BASE_VERBS | _IRREGULAR


def shapes_of(line: str, people: list[str], user: list[str], base: frozenset[str]) -> list[str]:
    """The shapes ``line`` has (see the module's docstring): ``people`` are the profile's people,
    ``user`` the user's name when the profile is theirs alone."""
    text = _QUOTED.sub('""', line)
    who = "|".join(["[Tt]he user", *(re.escape(n) for n in people)])
    found = []
    for m in re.finditer(rf"(?:(\S+) )?\b(?:{who}) ([a-z']+)\b", text):
        before = (m.group(1) or "").lower()
        if m.group(2) in base and before not in _BASE_OK_BEFORE:
            found.append("agreement")
            break
    if _FIRST.search(text):
        found.append("first person")
    if _CAPITAL_USER.search(text):
        found.append("capital User")
    if re.search(rf"\b({who}) (?:{who})\b|\b({who}) is \2\b", text):
        found.append("doubled")
    if user and re.search(rf"\b[Tt]he user(?:'s name)? is (?:{'|'.join(map(re.escape, user))})\b", text):
        found.append("naming")
    if user and any(_is_person(text, m.end(), base) for m in re.finditer(r"\b[Tt]he user\b", text)):
        found.append("nameless under a name")
    if re.search(r":\s*(?:\([^()]*\))?\.?$", line):
        found.append("announces")
    return found


def _is_person(text: str, end: int, base: frozenset[str]) -> bool:
    """Whether "the user" ending at ``end`` is the person, not a noun's modifier ("the user
    experience"): "'s", punctuation or the end follows, or a verb or a function word."""
    from memstrata.engines.offline.lexicon import STOPWORDS

    after = re.match(r"('s\b)|\s*([^\w\s]|$)|\s+([a-z']+)", text[end:])
    if after is None:
        return False
    word = after.group(3)
    if word is None:
        return True
    return word in base or word in STOPWORDS or word.endswith(("s", "ed")) or word in _BASE_OK_BEFORE


def _profile_lines(folder: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """The user's names (the persona's people) and ``(file, line)`` of the persona and scenes."""
    lines: list[tuple[str, str]] = []
    names: list[str] = []
    persona = folder / "persona.md"
    if persona.exists():
        body = persona.read_text().split("<!-- memstrata:scene-navigation")[0]
        about = re.search(r"^What these memories say about (.+), most telling first\.$", body, re.M)
        if about and about.group(1) != "the user":
            names = [n for n in re.split(r", | and ", about.group(1)) if n]
        for raw in body.splitlines():
            if raw.startswith(("#", "What these memories")) or not raw.strip():
                continue
            facts = raw.split(": ", 1)[1] if raw.startswith("- ") and ": " in raw else raw
            lines += [("persona.md", f) for f in facts.split("; ")]
    for scene in sorted((folder / "scene_blocks").glob("*.md")):
        text = scene.read_text().split("-----META-END-----")[-1]
        lines += [(scene.name, raw) for raw in text.splitlines() if raw.strip() and not raw.startswith("#")]
    return names, lines


def check(store: Path, show: int) -> Counter[str]:
    """Counts of lines per shape over the store's profiles; prints up to ``show`` of each."""
    base = _base_verbs()
    counts: Counter[str] = Counter()
    shown: Counter[str] = Counter()
    for folder in sorted((store / "profiles").glob("u=*")):
        names, lines = _profile_lines(folder)
        # A named profile of one person is the user; LoCoMo's two speakers are people, not aliases.
        user = names if len(names) == 1 else []
        for where, line in lines:
            counts["lines"] += 1
            for shape in shapes_of(line, names, user, base):
                counts[shape] += 1
                if shown[shape] < show:
                    shown[shape] += 1
                    print(f"  [{shape}] {folder.name}/{where}: {line[:220]}")
    return counts


def rebuild(store: Path) -> None:
    """Every tenant's scenes and persona written again by this checkout."""
    from memstrata import Memory

    with Memory.open(str(store)) as mem:
        for tenant in mem.tenants():
            mem.rebuild_scenes(user_id=tenant.user_id, agent_id=tenant.agent_id)


def main() -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stores", nargs="+", type=Path)
    parser.add_argument("--rebuild", action="store_true", help="rewrite scenes and personas first")
    parser.add_argument("--show", type=int, default=3, help="examples printed per shape")
    args = parser.parse_args()
    for store in args.stores:
        if args.rebuild:
            rebuild(store)
        counts = check(store, args.show)
        figures = ", ".join(f"{s} {counts[s]}" for s in SHAPES)
        print(f"{store}: {counts['lines']} lines; {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
