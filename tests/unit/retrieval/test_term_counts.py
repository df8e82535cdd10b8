"""Term counts kept between searches: reused only while they can be a little wrong."""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.models import Layer
from memstrata.retrieval.term_counts import MAX_AGE_S, TermCounts


class CountingIndex:
    """Answers ``document_counts`` from a table, and keeps every question asked."""

    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts
        self.asked: list[tuple[Layer, list[str]]] = []

    def __call__(self, layer: Layer, terms: Sequence[str]) -> dict[str, int]:
        self.asked.append((layer, list(terms)))
        return {t: self.counts[t] for t in terms if t in self.counts}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_count_read_for_one_search_serves_the_next_only_the_new_terms_are_read() -> None:
    index = CountingIndex({"remember": 1400, "garden": 227, "7": 109})
    kept = TermCounts(index, clock=Clock())
    assert kept.read(Layer.L0, ["remember", "garden"], size=2000) == {"remember": 1400, "garden": 227}
    assert kept.read(Layer.L0, ["remember", "7", "absent"], size=2000) == {
        "remember": 1400,
        "7": 109,
        "absent": 0,
    }
    assert index.asked == [(Layer.L0, ["remember", "garden"]), (Layer.L0, ["7", "absent"])]
    kept.read(Layer.L1, ["remember"], size=2000)  # each layer has counts of its own
    assert index.asked[-1] == (Layer.L1, ["remember"])


def test_a_count_is_read_again_once_its_layer_grew_past_the_bound_or_it_aged() -> None:
    index = CountingIndex({"remember": 1400})
    clock = Clock()
    kept = TermCounts(index, clock=clock)
    kept.read(Layer.L0, ["remember"], size=2000)
    kept.read(Layer.L0, ["remember"], size=2020)  # 1 % more records: still fresh
    assert len(index.asked) == 1
    index.counts["remember"] = 1500
    assert kept.read(Layer.L0, ["remember"], size=2021) == {"remember": 1500}
    assert len(index.asked) == 2
    clock.now += MAX_AGE_S
    kept.read(Layer.L0, ["remember"], size=2021)
    assert len(index.asked) == 3
    kept.read(Layer.L0, ["remember"], size=2000)  # a smaller layer (rebuilt): read again
    assert len(index.asked) == 4


def test_a_small_layer_reads_its_counts_again_after_any_growth() -> None:
    index = CountingIndex({"maya": 3})
    kept = TermCounts(index, clock=Clock())
    for size in (5, 5, 6, 7, 7):
        kept.read(Layer.L1, ["maya"], size=size)
    assert len(index.asked) == 3


def test_the_kept_counts_are_bounded() -> None:
    index = CountingIndex({})
    kept = TermCounts(index, capacity=2, clock=Clock())
    kept.read(Layer.L0, ["a", "b", "c"], size=10)
    kept.read(Layer.L0, ["a"], size=10)  # forgotten first, as the least recently used
    assert index.asked[-1] == (Layer.L0, ["a"])
