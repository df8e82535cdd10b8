"""What a newcomer's first searches find: top-1 precision and MRR on the demo's questions and ten
more on a conversation of this script's own, with the relevant memories labelled; and whether
off-topic questions find nothing.

    python bench/first_impressions.py

Imports the demo conversation (``memstrata.demo``) and ``SAM`` below into a temporary directory
with the default settings (offline engine, the installed embedder), then searches each question
(``limit=10``, layers L1 and L0). A hit is relevant when its text holds one of the question's
labels (words only the relevant memory has). Prints one line per question, then the totals.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

SAM = [
    "I'm Sam, I teach chemistry at a secondary school in Leeds.",
    "My daughter Ruby turns seven on 12 May; she wants a dinosaur cake.",
    "I run 10 km every Sunday morning along the canal.",
    "I'm lactose intolerant, so no milk in my coffee please.",
    "We are going to Kyoto in October to see the temples.",
    "My old car broke down, so I bought an electric Kia last month.",
    "I play bass guitar in a band called The Quiet Hours.",
    "My brother Leo lives in Toronto and works as a nurse.",
    "I'm learning Japanese with an app before the trip.",
    "Please keep your answers short and skip the emojis.",
]
# (tenant, question, labels): a hit is relevant when its text holds one of the labels.
QUESTIONS: list[tuple[str, str, tuple[str, ...]]] = [
    ("maya", "Where does Maya work?", ("bike-sharing",)),
    ("maya", "What food should I avoid offering Maya?", ("peanuts",)),
    ("maya", "When is Tom moving?", ("June 14",)),
    ("maya", "where does Maya live", ("Lisbon", "Graça")),
    ("sam", "What does Sam do for a living?", ("chemistry",)),
    ("sam", "When is Ruby's birthday?", ("12 May", "seven")),
    ("sam", "What exercise does Sam do?", ("10 km", "canal")),
    ("sam", "What can't Sam drink?", ("lactose", "milk")),
    ("sam", "Where is Sam travelling this autumn?", ("Kyoto",)),
    ("sam", "What car does Sam drive?", ("Kia",)),
    ("sam", "Which instrument does Sam play?", ("bass",)),
    ("sam", "Where does Sam's brother live?", ("Toronto",)),
    ("sam", "What language is Sam learning?", ("Japanese",)),
    ("sam", "How should answers to Sam be written?", ("short", "emojis")),
]
OFF_TOPIC = (
    "bananas",
    "What is the boiling point of mercury?",
    "How do I configure TLS on a Kubernetes ingress?",
    "Who won the 1954 football world cup?",
)


def seed() -> dict[str, Any]:
    from memstrata.demo import sample

    data: dict[str, Any] = sample()
    turns = [
        {"role": "user", "name": "Sam", "content": t, "timestamp": f"2026-04-{1 + i:02d}T10:00:00Z"}
        for i, t in enumerate(SAM)
    ]
    data["sessions"].append({"sessionKey": "chat-sam", "userId": "sam", "conversations": [turns]})
    return data


def main() -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from memstrata import Memory
    from memstrata.interchange import parse_import

    top1, rr = [], []
    with tempfile.TemporaryDirectory(prefix="first-impressions-") as home, Memory.open(home) as mem:
        mem.import_sessions(parse_import(seed()))
        for user, question, labels in QUESTIONS:
            hits = mem.search(question, user_id=user, layers=("L1", "L0"), limit=10)
            ranks = [i for i, h in enumerate(hits, start=1) if any(x in h.content for x in labels)]
            top1.append(1.0 if ranks and ranks[0] == 1 else 0.0)
            rr.append(1.0 / ranks[0] if ranks else 0.0)
            first = hits[0].content[:60] if len(hits) else "(nothing)"
            print(f"{question:42s} first relevant at {ranks[0] if ranks else '-'}; top-1: {first}")
        leaks = {
            (q, u): len(mem.search(q, user_id=u, layers=("L1", "L0")))
            for q in OFF_TOPIC
            for u in ("maya", "sam")
        }
    n = len(QUESTIONS)
    print(f"top-1 precision {sum(top1) / n:.2f}, MRR {sum(rr) / n:.3f} over {n} questions")
    print(f"off-topic questions finding something: {sum(1 for v in leaks.values() if v)}/{len(leaks)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
