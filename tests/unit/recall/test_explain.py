"""The words shown as why a hit matched are the ones its keyword share counted."""

from __future__ import annotations

from memstrata.models import Hit, Layer
from memstrata.recall import matched_words

MAY_8 = 1_683_504_000_000  # 8 May 2023


def test_a_word_is_matched_by_its_stem() -> None:
    hit = Hit(Layer.L1, "a", 0.5, "Maya has a peanut allergy", ("m1",), {"message_time": MAY_8})
    assert matched_words("What is Maya allergic to?", hit) == ["maya", "allergic"]


def test_a_date_word_counts_as_the_share_counts_it() -> None:
    hit = Hit(Layer.L0, "m1", 0.2, "We went hiking.", ("m1",), {"timestamp": MAY_8, "role": "user"})
    assert matched_words("What did I do in 2023?", hit) == ["2023"]  # its date, in words
    assert matched_words("What did I do in 2024?", hit) == []


def test_a_word_past_what_the_share_reads_is_not_shown() -> None:
    from memstrata.retrieval.terms import JUDGED_CHARS

    hit = Hit(Layer.L0, "m1", 0.2, "x " * JUDGED_CHARS + "kubernetes", ("m1",), {"role": "user"})
    assert matched_words("kubernetes", hit) == []
