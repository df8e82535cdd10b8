"""The relevance score: in [0, 1], from the cosine and the idf-weighted keyword share."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstrata.retrieval.relevance import (
    PREFIX_MIN,
    VECTOR_ONE,
    VECTOR_ZERO,
    Evidence,
    _Held,
    idf_weights,
    keyword_share,
)


def test_the_keyword_share_weighs_rare_terms_more_than_common_ones() -> None:
    weights = idf_weights(["maya", "peanuts"], total=100, counts={"maya": 90, "peanuts": 2})
    assert weights["peanuts"] > weights["maya"] > 0
    assert keyword_share(weights, "Maya is allergic to peanuts.") == pytest.approx(1.0)
    assert keyword_share(weights, "Maya lives in Lisbon.") < 0.2 < keyword_share(weights, "No peanuts here")


def test_words_match_by_stem_and_by_a_long_shared_beginning() -> None:
    weights = idf_weights(["allergy", "climbing"], total=10, counts={})
    assert keyword_share(weights, "She is allergic and climbs") == pytest.approx(1.0)
    assert keyword_share(weights, "bananas") == 0.0


def test_the_score_stays_in_the_unit_interval_and_grows_with_each_signal() -> None:
    nothing = Evidence(cosine=-0.3, keyword=0.0, fused=0.1, rank=1)
    assert nothing.score() == 0.0
    full = Evidence(cosine=0.99, keyword=1.0, fused=0.1, rank=1)
    assert full.score() == pytest.approx(1.0)
    middle = (VECTOR_ZERO + VECTOR_ONE) / 2
    assert 0 < Evidence(middle, 0.0, 0.1, 1).score() < Evidence(middle, 0.5, 0.1, 1).score() < 1
    assert Evidence(None, 0.4, 0.1, 3).score() == pytest.approx(0.4)  # no vector: the keyword share alone
    assert set(full.explain()) == {"relevance", "cosine", "vector", "keyword", "fused"}
    assert full.explain()["relevance"] == pytest.approx(full.score(), abs=1e-6)


def _held_by_scan(stems: frozenset[str], term: str) -> bool:
    """The matching rule read off its definition: a scan over the text's stems."""
    if term in stems:
        return True
    return len(term) >= PREFIX_MIN and any(
        len(h) >= PREFIX_MIN and (h.startswith(term) or term.startswith(h)) for h in stems
    )


@given(
    st.frozensets(st.text(alphabet="abcde", min_size=1, max_size=9), max_size=8),
    st.text(alphabet="abcde", min_size=1, max_size=9),
)
def test_the_prefix_sets_match_exactly_what_a_scan_of_the_stems_matches(
    stems: frozenset[str], term: str
) -> None:
    assert _Held(stems).holds(term) == _held_by_scan(stems, term)
