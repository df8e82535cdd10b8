"""A store indexed with an older definition of its texts (``retrieval/reindex.py``) is brought to
the current one by ``reindex``: every message's keyword text rewritten, every message re-embedded."""

from __future__ import annotations

from pathlib import Path

from memstrata import Memory
from memstrata.clock import FakeClock
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.models import Layer, MessageFilter, Tenant
from memstrata.retrieval.documents import ASSISTANT_VECTOR_WORDS, message_vector_text
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
    """A store built before version 4 (an assistant's whole message embedded) is flagged until
    ``reindex`` rewrites its keyword texts and re-embeds its messages (not its atoms: their vector
    texts did not change)."""
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(32)) as mem:
        mem.capture([{"role": "user", "content": "I moved to Lisbon."}], session_key="s", user_id="ana")
        assert not [p for p in mem.status().problems if "reindex" in p]
        index = mem._async._store.index
        index.set_index_version(3)
        assert [p for p in mem.status().problems if "memstrata reindex" in p]
        assert mem.reindex() == 1  # the message re-embedded
        assert index.index_version() == INDEX_VERSION
        assert not [p for p in mem.status().problems if "reindex" in p]


def test_an_assistants_message_is_embedded_from_its_first_words(home: Path, clock: FakeClock) -> None:
    """Its vector is made from its first ``ASSISTANT_VECTOR_WORDS`` words; a user's long message
    from all of its text, and keyword search reads both whole."""
    long = " ".join(f"word{i}" for i in range(3 * ASSISTANT_VECTOR_WORDS)) + " zebrafish"
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(64)) as mem:
        stored = mem.capture(
            [{"role": "user", "content": long}, {"role": "assistant", "content": long}],
            session_key="s",
            user_id="ana",
        ).stored
        index = mem._async._store.index
        vectors = index.get_vectors(T, Layer.L0, [m.seq for m in stored])
        user, reply = (vectors[m.seq] for m in stored)
        cut = message_vector_text(stored[1])
        assert len(cut.split()) == ASSISTANT_VECTOR_WORDS and "zebrafish" not in cut
        assert "zebrafish" in message_vector_text(stored[0])
        assert abs(float(reply @ HashingEmbedder(64).embed([cut])[0]) - 1.0) < 1e-4
        assert abs(float(user @ HashingEmbedder(64).embed([message_vector_text(stored[0])])[0]) - 1.0) < 1e-4
        hits = index.keyword(T, MessageFilter(), ["zebrafish"], 5)
        assert {h.seq for h in hits} == {m.seq for m in stored}
