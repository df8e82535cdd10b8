"""A nameless user speaking in the first person, as an agent's memory sees them: ten first-person
questions about what they said, each labelled with the message that answers it. Top-1 precision and
MRR of search (default layers and floor), and whether off-topic questions find nothing. The same
conversation again with the user named (as the README's quickstart captures Maya's messages), so a
first-person question meets facts the index states of a name.

    python bench/first_person.py

The conversation is this script's own (not from any dev set): one user with no ``name``, an
assistant replying, some turns that share the answers' words without answering (another city, the
sister's cat). Imported with the default settings (offline engine, the installed embedder) into a
temporary directory, pipeline run; a hit is relevant when its ``source_message_ids`` hold the
labelled message.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

# (message id, role, text): the user never gives a name.
TURNS: list[tuple[str, str, str]] = [
    ("u1", "user", "I moved to Lisbon last month, still getting used to all the hills."),
    ("a1", "assistant", "Congratulations on the move! How are you finding it so far?"),
    ("u2", "user", "I visited Porto last year for a friend's wedding, lovely city."),
    ("u3", "user", "I'm allergic to shellfish, so no prawns or mussels for me."),
    ("a3", "assistant", "Noted. I'll leave seafood out of the recipes I suggest."),
    ("u4", "user", "My daughter Inês starts primary school in September."),
    ("u5", "user", "I work as a backend engineer at a logistics startup."),
    ("u6", "user", "We decided to keep the orders table in PostgreSQL and move the events to Kafka."),
    ("a6", "assistant", "That split makes sense: transactional data in Postgres, the event stream in Kafka."),
    ("u7", "user", "My bike got stolen outside the train station on Tuesday."),
    ("u8", "user", "I usually run 10 km along the river on Sunday mornings."),
    ("u9", "user", "Radiohead is my favourite band, I've seen them live three times."),
    ("u10", "user", "I always book a window seat when I fly."),
    ("u11", "user", "My sister Marta lives in Berlin and visits us every Christmas."),
    ("u12", "user", "Marta sent me a photo of her new cat today."),
]
# (question, the message that answers it)
QUESTIONS: list[tuple[str, str]] = [
    ("where do I live?", "u1"),
    ("What am I allergic to?", "u3"),
    ("When does my daughter start school?", "u4"),
    ("What do I do for work?", "u5"),
    ("What did I decide about the orders table?", "u6"),
    ("What happened to my bike?", "u7"),
    ("How far do I run on weekends?", "u8"),
    ("Which band do I like most?", "u9"),
    ("Which seat do I prefer on planes?", "u10"),
    ("Where does my sister live?", "u11"),
]
OFF_TOPIC = (
    "What is the boiling point of mercury?",
    "Who won the 1954 football world cup?",
    "Explain the proof of Fermat's last theorem",
)
USER = "me"
NAMED = "ines-mum"  # the same turns, the user's named "Rita"
NAME = "Rita"


def seed() -> dict[str, Any]:
    sessions = []
    for user, name in ((USER, None), (NAMED, NAME)):
        turns = [
            {"role": role, "content": text, "id": mid, "timestamp": f"2026-04-{1 + i:02d}T10:00:00Z"}
            | ({"name": name} if name and role == "user" else {})
            for i, (mid, role, text) in enumerate(TURNS)
        ]
        sessions.append({"sessionKey": "chat", "userId": user, "conversations": [turns]})
    return {"sessions": sessions}


def measure(mem: Any, user: str = USER) -> tuple[list[int | None], int]:
    """The rank of each question's answer (None: not in the top 10), and how many off-topic
    questions found something."""
    ranks: list[int | None] = []
    for question, answer in QUESTIONS:
        hits = mem.search(question, user_id=user, limit=10)
        found = [i for i, h in enumerate(hits, start=1) if answer in h.source_message_ids]
        ranks.append(found[0] if found else None)
    leaks = sum(1 for q in OFF_TOPIC if len(mem.search(q, user_id=user)))
    return ranks, leaks


def main() -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from memstrata import Memory
    from memstrata.interchange import parse_import

    with tempfile.TemporaryDirectory(prefix="first-person-") as home, Memory.open(home) as mem:
        mem.import_sessions(parse_import(seed()))
        measured = [
            (who, *measure(mem, user)) for who, user in (("nameless", USER), (f"named {NAME}", NAMED))
        ]
    for who, ranks, leaks in measured:
        for (question, answer), rank in zip(QUESTIONS, ranks, strict=True):
            print(f"{who:10s} {question:45s} {answer:4s} at {rank if rank else '-'}")
        n = len(QUESTIONS)
        top1 = sum(1 for r in ranks if r == 1) / n
        mrr = sum(1 / r for r in ranks if r) / n
        print(
            f"first person, {who}: top-1 {top1:.2f}, MRR {mrr:.3f} over {n} questions;"
            f" off-topic finding something {leaks}/{len(OFF_TOPIC)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
