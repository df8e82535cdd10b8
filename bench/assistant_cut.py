"""What embedding an assistant's message from its first words saves: the messages' texts whole
(``message_text``, their vector texts before index version 4) against the same texts with an
assistant's cut to its first ``--words`` words (``ASSISTANT_VECTOR_WORDS`` by default, speaker and
date included: ``message_vector_text``), alternated.

    python bench/assistant_cut.py [--data SEED.json] [--words 60] [--sessions N] [--rounds 2]

Counts the word pieces the local model reads per role both ways over every session of the seed
(BEAM dev by default), then embeds the first ``--sessions`` sessions' batches both ways in this
thread with BLAS on one thread (``LocalEmbedder.embed``'s groups, packed), the order alternating
from round to round, and prints the pieces and this thread's CPU time of each way, cut over whole.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from memstrata.blas import single_threaded_blas
from memstrata.embeddings.local import LocalEmbedder, _groups
from memstrata.interchange.seed import parse_seed
from memstrata.models import Message, Role, Tenant
from memstrata.retrieval.documents import ASSISTANT_VECTOR_WORDS, first_words, message_text

BEAM = Path(__file__).resolve().parents[2] / "shared" / "data" / "beam" / "beam-dev.json"


def sessions(data: Path) -> list[list[Message]]:
    """Each session's messages as stored (one capture batch per session)."""
    out = []
    for s in parse_seed(json.loads(data.read_text(encoding="utf-8"))):
        out.append(
            [
                Message("", Tenant(), "", "", Role(m.role), m.content, m.timestamp or 0, i, m.name)
                for i, m in enumerate(s.messages)
            ]
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=BEAM)
    ap.add_argument("--words", type=int, default=ASSISTANT_VECTOR_WORDS)
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    model, tokenizer = LocalEmbedder()._model()

    def cut(m: Message) -> str:
        text = message_text(m)
        return first_words(text, a.words) if m.role == Role.ASSISTANT else text

    ways: dict[str, Callable[[Message], str]] = {"cut": cut, "whole": message_text}
    every = sessions(a.data)
    pieces = {way: dict.fromkeys(Role, 0) for way in ways}
    for messages in every:
        for m in messages:
            for way, text in ways.items():
                pieces[way][m.role] += len(tokenizer.encode(text(m)))
    encoded = {
        way: [[tokenizer.encode(ways[way](m)) for m in b] for b in every[: a.sessions]] for way in ways
    }
    cpu = dict.fromkeys(ways, 0.0)
    with single_threaded_blas():
        model.encode(encoded["whole"][0][:8])  # warm the path (first-call allocations)
        for r in range(a.rounds):
            for way in list(ways)[r % 2 :] + list(ways)[: r % 2]:
                start = time.thread_time()
                for batch in encoded[way]:
                    for rows in _groups(batch, packed=True):
                        model.encode([batch[i] for i in rows])
                cpu[way] += time.thread_time() - start
    total = {way: sum(by_role.values()) for way, by_role in pieces.items()}
    for way in ways:
        roles = ", ".join(f"{role} {n}" for role, n in pieces[way].items())
        timed = sum(len(ids) for batch in encoded[way] for ids in batch)
        print(
            f"{way}: {total[way]} word pieces ({roles}); the first {a.sessions} sessions' {timed}: "
            f"CPU {cpu[way] / a.rounds:.2f} s"
        )
    print(
        f"cut at {a.words} words over whole: word pieces x{total['cut'] / total['whole']:.2f}, "
        f"CPU x{cpu['cut'] / cpu['whole']:.2f} ({a.rounds} rounds, one core)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
