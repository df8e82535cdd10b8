"""The Chinese test set through the default pipeline: what Chinese memories look like and find.

    .venv/bin/python bench/zh_check.py [--data bench/data/zh_conversations.json] [--embedder settings|none]

The set (written for this, not tuned on) holds several multi-session Chinese conversations with
labelled questions (facts, relative dates, instructions, relationships, plans) and the day each
relative date means, plus one mixed Chinese-English conversation. Each is imported into a fresh
data directory (`Memory.import_sessions`: L0 to L3), then printed per set:

- answer words in the top-3 search hits (layers L1, L0; hybrid, and keyword only) and in recall's
  context (`system_context + prepend_context`): the share of questions with all their answer words;
- relative dates resolved: the share of labelled dates (a phrase of a message, the days it means) that an atom of that message spans;
- atoms with English framing ("said:", "asked:", "answered:", "User", "Assistant") among the atoms
  of Chinese messages (target 0);
- persona facts named: the share of fact, relationship and instruction answers the persona holds;
- scene names in Chinese: scenes whose name has a Chinese character, of all scenes.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from memstrata import Memory
from memstrata.interchange import parse_import
from memstrata.retrieval.terms import has_unspaced as has_cjk

DATA = Path(__file__).resolve().parent / "data" / "zh_conversations.json"
_ENGLISH_FRAMING = re.compile(r"\b(?:said|asked|answered|shared a photo)\b|\bUser\b|\bAssistant\b")
PERSONA_CATEGORIES = ("fact", "relationship", "instruction")


def _has_all(text: str, words: Sequence[str]) -> bool:
    low = text.lower()
    return all(w.lower() in low for w in words)


def _mostly_chinese(text: str) -> bool:
    """Chinese characters outnumber Latin words (this script also runs against older versions)."""
    return len(re.findall(r"[\u4e00-\u9fff]", text)) / 2 > len(re.findall(r"[A-Za-z]+", text))


def _day(value: object) -> date | None:
    return date.fromisoformat(str(value)[:10]) if value else None


class Tally:
    """Counts per measure: ``hits[name] / totals[name]``."""

    def __init__(self) -> None:
        self.hits: dict[str, int] = {}
        self.totals: dict[str, int] = {}

    def add(self, name: str, hit: bool, n: int = 1) -> None:
        self.hits[name] = self.hits.get(name, 0) + int(hit) * n
        self.totals[name] = self.totals.get(name, 0) + n

    def line(self, name: str) -> str:
        h, t = self.hits.get(name, 0), self.totals.get(name, 0)
        return f"{h}/{t} ({100 * h / t:.0f}%)" if t else "-"


def _questions(mem: Memory, conv: dict[str, Any], tally: Tally) -> None:
    user, key = conv["user_id"], conv["session_key"]
    persona = mem.persona(user_id=user)
    body = persona.body if persona is not None else ""
    for q in conv["questions"]:
        words = q["answer_words"]
        for mode in ("hybrid", "keyword"):
            found = mem.search(q["question"], user_id=user, layers=("L1", "L0"), limit=3, mode=mode)
            hit = _has_all(" ".join(h.content for h in found), words)
            tally.add(f"top-3 search hits ({mode})", hit)
            if SHOW and not hit:
                print(f"  search miss ({mode}): {q['question']} -> {[h.content for h in found]}")
        recalled = mem.recall(q["question"], user_id=user, session_key=key)
        tally.add("recall's context", _has_all(recalled.system_context + recalled.prepend_context, words))
        if q["category"] in PERSONA_CATEGORIES:
            tally.add("persona facts named", _has_all(body, words))
            if SHOW and not _has_all(body, words):
                print(f"  not in persona: {q['question']} {words}")


def _dates(mem: Memory, conv: dict[str, Any], tally: Tally) -> None:
    user = conv["user_id"]
    messages = mem.messages(user_id=user, limit=1000)
    atoms = mem.atoms(user_id=user, limit=1000)
    for label in conv["relative_dates"]:
        ids = {m.id for m in messages if label["message_has"] in m.content}
        start, end = date.fromisoformat(label["start"]), date.fromisoformat(label["end"])
        spans = [
            (_day(a.metadata.get("activity_start")), _day(a.metadata.get("activity_end")))
            for a in atoms
            if ids & set(a.source_message_ids)
        ]
        resolved = any(s is not None and e is not None and s <= start and end <= e for s, e in spans)
        tally.add("relative dates resolved", resolved)
        if not resolved and SHOW:
            print(f"  unresolved: {label} spans {spans}")
    chinese = {m.id for m in messages if _mostly_chinese(m.content)}
    for a in atoms:
        if chinese & set(a.source_message_ids):
            tally.add("atoms with English framing", bool(_ENGLISH_FRAMING.search(a.content)))
    for s in mem.scenes(user_id=user):
        tally.add("scene names in Chinese", has_cjk(s.name))


SHOW = False


def run(conversations: Sequence[dict[str, Any]], embedder: str | None, show: bool) -> Tally:
    tally = Tally()
    for conv in conversations:
        with (
            tempfile.TemporaryDirectory(prefix="zh-check-") as home,
            Memory.open(Path(home), embedder=embedder) as mem,
        ):
            mem.import_sessions(parse_import({"sessions": conv["sessions"]}))
            _questions(mem, conv, tally)
            _dates(mem, conv, tally)
            if show:
                for a in mem.atoms(user_id=conv["user_id"], limit=1000):
                    print(f"  [{a.type}|{a.scene_name}] {a.content}")
    return tally


MEASURES = (
    "top-3 search hits (hybrid)",
    "top-3 search hits (keyword)",
    "recall's context",
    "relative dates resolved",
    "persona facts named",
    "scene names in Chinese",
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--embedder", default="settings", help="'settings' (the default local model) or 'none'")
    ap.add_argument("--show", action="store_true", help="print every atom")
    a = ap.parse_args()
    global SHOW
    SHOW = a.show
    data = json.loads(a.data.read_text(encoding="utf-8"))
    embedder = None if a.embedder == "none" else a.embedder
    for title, convs in (("Chinese", data["conversations"]), ("mixed zh/en", data["mixed"])):
        tally = run(convs, embedder, a.show)
        n_questions = sum(len(c["questions"]) for c in convs)
        print(f"{title}: {len(convs)} conversations, {n_questions} questions, embedder {a.embedder}")
        for name in MEASURES:
            print(f"  {name:<32} {tally.line(name)}")
        framing = tally.hits.get("atoms with English framing", 0)
        print(
            f"  {'atoms with English framing':<32} {framing} of {tally.totals.get('atoms with English framing', 0)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
