"""A store indexed with an older definition of its texts (``retrieval/reindex.py``) is brought to
the current one by ``reindex``: every message's keyword text rewritten, every message re-embedded."""

from __future__ import annotations

from pathlib import Path

from memstrata import Memory
from memstrata.clock import FakeClock
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.models import Layer, MessageFilter, Tenant
from memstrata.retrieval.documents import message_vector_text
from memstrata.retrieval.reindex import INDEX_VERSION

T = Tenant("ana", "default")
LONG = (
    "We compared the options at length. " * 40
    + "\n```sql\nCREATE INDEX invoices_brin ON invoices USING brin (created_at);\n```"
)


def test_reindex_brings_an_older_store_to_the_current_texts(home: Path, clock: FakeClock) -> None:
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(32)) as mem:
        stored = mem.capture(
            [
                {"role": "user", "content": "How should I index invoices?"},
                {"role": "assistant", "content": LONG},
            ],
            session_key="s",
            user_id="ana",
        ).stored
        index = mem._async._store.index
        reply = stored[1]
        index.rewrite_texts(Layer.L0, {reply.seq: "older text"})
        index.put_vectors(T, Layer.L0, [reply.seq], HashingEmbedder(32).embed(["older text"]))
        index.set_index_version(1)
        assert index.keyword(T, MessageFilter(), ["brin"], 5) == []

        assert mem.reindex() == 2  # both messages re-embedded, with the same model
        assert index.index_version() == INDEX_VERSION
        assert [s.seq for s in index.keyword(T, MessageFilter(), ["brin"], 5)] == [reply.seq]
        assert index.count_missing_vectors(Layer.L0) == 0
        mine = HashingEmbedder(32).embed([message_vector_text(reply)])[0]
        assert abs(float(index.get_vectors(T, Layer.L0, [reply.seq])[reply.seq] @ mine) - 1.0) < 1e-4


def test_status_asks_for_reindex_on_a_store_of_an_older_version(home: Path, clock: FakeClock) -> None:
    """A store built before version 3 (short messages' previous turn cut at 300 characters) is
    flagged until ``reindex`` rewrites its keyword texts; its message vectors are kept (their
    texts did not change since version 2)."""
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(32)) as mem:
        mem.capture([{"role": "user", "content": "I moved to Lisbon."}], session_key="s", user_id="ana")
        assert not [p for p in mem.status().problems if "reindex" in p]
        index = mem._async._store.index
        index.set_index_version(2)
        assert [p for p in mem.status().problems if "memstrata reindex" in p]
        assert mem.reindex() == 0  # nothing re-embedded: vector texts are those of version 2
        assert index.index_version() == INDEX_VERSION
        assert not [p for p in mem.status().problems if "reindex" in p]
