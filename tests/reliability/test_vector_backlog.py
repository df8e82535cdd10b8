"""Vectors are durable like the L1 cursor: a record left without a vector (a failed embedding, a
crash between the commit and its vectors) is a backlog the pipeline drains, visible in status."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from memstrata import FakeClock, Memory
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.errors import EmbeddingError
from memstrata.models import Vectors


class FlakyEmbedder(HashingEmbedder):
    """The hashing embedder, failing while ``down`` is set."""

    down = False

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.down:
            raise EmbeddingError("embedding endpoint unreachable")
        return super().embed(texts)


def chat(n: int) -> list[dict[str, object]]:
    return [
        {"role": "user", "content": f"Fact number {i}: I own {i} guitars.", "id": f"m{i}"} for i in range(n)
    ]


def vectors(home: Path) -> int:
    with sqlite3.connect(home / "memstrata.db") as db:
        return int(db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])


def test_failed_embeddings_are_retried_by_the_pipeline(home: Path, clock: FakeClock) -> None:
    embedder = FlakyEmbedder(64)
    with Memory.open(home, clock=clock, embedder=embedder) as mem:
        embedder.down = True
        r = mem.capture(chat(3), session_key="s")
        assert any("retried in the background" in d for d in r.degradations)
        assert mem.status().unembedded == 3
        mem.run_pending()
        st = mem.status()
        assert st.unembedded >= 3 and any("unreachable" in p for p in st.problems)
        embedder.down = False
        clock.advance(31)  # past the retry delay
        mem.run_pending()
        assert mem.status().unembedded == 0
        assert mem.search("guitars", mode="vector", layers=("L0",)).strategy == "vector"


def test_records_that_lost_their_vectors_in_a_crash_get_them_back_on_the_next_run(
    home: Path, clock: FakeClock
) -> None:
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(64)) as mem:
        mem.capture(chat(5), session_key="s")
        mem.end_session("s")
        total = vectors(home)
    with sqlite3.connect(home / "memstrata.db") as db:  # what a kill before the vectors leaves
        db.execute("DELETE FROM vectors WHERE seq % 2 = 0")
    assert vectors(home) < total
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(64)) as mem:
        assert mem.status().unembedded == total - vectors(home)
        mem.run_pending()
        assert mem.status().unembedded == 0
    assert vectors(home) == total


class CountingEmbedder(FlakyEmbedder):
    """Records how many texts each embed call was given."""

    def __init__(self, dimensions: int) -> None:
        super().__init__(dimensions)
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not self.down:
            self.calls.append(len(texts))
        return super().embed(texts)


def test_the_backlog_embeds_many_tenants_records_in_one_pass(home: Path, clock: FakeClock) -> None:
    embedder = CountingEmbedder(64)
    with Memory.open(home, clock=clock, embedder=embedder) as mem:
        embedder.down = True
        for user in ("ana", "ben", "caro"):
            mem.capture(chat(2), session_key="s", user_id=user)
        mem.delete_messages(["m1"], user_id="ben")  # deleted before its vector was made
        embedder.down = False
        clock.advance(31)
        mem.run_pending()
        assert embedder.calls[0] == 5  # one pass for three tenants, the forgotten message left out
        assert mem.status().unembedded == 0
        found = {
            user: {h.id for h in mem.search("guitars", mode="vector", layers=("L0",), user_id=user).hits}
            for user in ("ana", "ben", "caro")
        }
        assert found == {"ana": {"m0", "m1"}, "ben": {"m0"}, "caro": {"m0", "m1"}}
