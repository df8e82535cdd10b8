"""The process the ``remember`` crash test kills: remember notes one after another, forever.

    python _remember_child.py HOME [--background]

It opens ``Memory.open(HOME, embedder=HashingEmbedder(64))`` (the pipeline in a background thread
with ``--background``, as a server runs it) and remembers ``note N`` texts in a loop; after each
``remember`` returns it prints ``{"id": ..., "text": ...}`` and flushes, so every line the parent
reads is a note acknowledged to the caller. It never stops by itself: the parent kills it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memstrata import Memory
from memstrata.embeddings.hashing import HashingEmbedder

USER = "crash"
PLACES = ("Lisbon", "Porto", "Berlin", "Graça", "Sintra", "Alcântara", "Braga", "Faro")


def note(i: int) -> str:
    """A note of its own words, so a search for it finds it first."""
    return f"Note {i}: Maya keeps locker {i} at the {PLACES[i % len(PLACES)]} gym, code q{i * 7919}."


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("home", type=Path)
    parser.add_argument("--background", action="store_true")
    given = parser.parse_args()
    with Memory.open(given.home, embedder=HashingEmbedder(64), background=given.background) as mem:
        i = 0
        while True:
            atom = mem.remember(note(i), user_id=USER)
            print(json.dumps({"id": atom.id, "text": note(i)}), flush=True)
            i += 1


if __name__ == "__main__":
    main()
