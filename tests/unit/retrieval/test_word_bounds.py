"""The per-word bounds of ``retrieval.terms``: long words cut by one rule on every side, long CJK
runs segmented in pieces, judged texts read to their first characters; ordinary text as before."""

from __future__ import annotations

import hashlib
from pathlib import Path

import jieba.posseg

from memstrata import Memory
from memstrata.lang.zh import words as zh_words
from memstrata.lang.zh.words import SEGMENT_RUN_CHARS
from memstrata.retrieval import terms
from memstrata.retrieval.relevance import keyword_share
from memstrata.retrieval.terms import JUDGED_CHARS, MAX_WORD_CHARS

SENTENCE = "我昨天在北京吃了烤鸭，然后去公园散步"


def test_a_word_longer_than_the_limit_counts_as_its_start() -> None:
    long = "b" * (MAX_WORD_CHARS + 40)
    assert terms.words(f"see {long} now") == ["see", "b" * MAX_WORD_CHARS, "now"]
    assert terms.segment(f"see {long}_x now") == f"see {'b' * MAX_WORD_CHARS}_x now"
    assert terms.plain_words(f"{long}'s") == ["b" * MAX_WORD_CHARS]


def test_words_joined_by_apostrophes_are_cut_as_one_word() -> None:
    assert terms.words("a'" * 1_000) == [("a'" * 1_000)[:MAX_WORD_CHARS]]


def test_a_sha256_in_hex_and_ordinary_words_count_whole() -> None:
    digest = hashlib.sha256(b"x").hexdigest()
    text = f"the commit {digest} fixed antidisestablishmentarianism"
    assert terms.segment(text) == text
    assert terms.words(text) == ["the", "commit", digest, "fixed", "antidisestablishmentarianism"]


def test_ordinary_chinese_is_segmented_as_before() -> None:
    whole = " ".join(w for w in zh_words._jieba().cut_for_search("我昨天在北京吃了烤鸭") if w.strip())
    assert whole in terms.segment(SENTENCE)
    assert zh_words.tagged(SENTENCE) == [(p.word, p.flag) for p in jieba.posseg.cut(SENTENCE)]


def test_a_long_cjk_run_is_segmented_in_pieces() -> None:
    run = "中" * (3 * SEGMENT_RUN_CHARS + 7)
    assert "".join(terms.words(run)) == run  # every character is still there, as words
    parts = zh_words._parts(f"ab{run}cd")
    assert "".join(parts) == f"ab{run}cd"
    assert all(len(p) <= SEGMENT_RUN_CHARS + 2 for p in parts)
    assert zh_words._parts(SENTENCE) == [SENTENCE]  # a text without a long run stays one part


def test_a_judged_text_is_read_to_its_first_characters() -> None:
    near = "filler " * (JUDGED_CHARS // 7 - 10) + "kayak"
    far = "filler " * (JUDGED_CHARS // 7 + 10) + "kayak"
    assert keyword_share({"kayak": 1.0}, near) == 1.0
    assert keyword_share({"kayak": 1.0}, far) == 0.0


def test_prefix_matching_of_stems_is_unchanged() -> None:
    # "allergic" stems to "allerg", "allergy" to "allergi": either finds the other.
    assert keyword_share({"allergy": 1.0}, "She is allergic to peanuts") == 1.0
    assert keyword_share({"allergic": 1.0}, "a peanut allergy") == 1.0
    assert keyword_share({"aller": 1.0}, "a peanut allergy") == 1.0  # 5 letters begin a held stem
    assert keyword_share({"alle": 1.0}, "a peanut allergy") == 0.0  # 4 do not
    assert keyword_share({"allergies": 1.0}, "a peanut allergy") == 1.0


def test_a_query_with_a_long_word_finds_the_message_holding_it(tmp_path: Path) -> None:
    word = "Q" * 500
    with Memory.open(tmp_path / "data", embedder=None) as mem:
        mem.capture([{"role": "user", "content": f"the key is {word}"}], session_key="s")
        mem.capture([{"role": "user", "content": "nothing here"}], session_key="t")
        found = mem.search(f"find {word}", layers=("L0",), mode="keyword")
    assert [h.content for h in found.hits] == [f"the key is {word}"]
