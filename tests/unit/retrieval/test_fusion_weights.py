"""A keyword list's weight follows its agreement with the query's meaning; a hit's score is its
fused place as a share of the most a record can get."""

from __future__ import annotations

import pytest

from memstrata.models import Layer
from memstrata.retrieval.fusion import AGREE_FULL, AGREE_POWER, INSTRUCTION_FULL, agreed_weight, agreement
from memstrata.retrieval.legs import Legs


def legs_of(cosines: dict[tuple[Layer, int], float], **lists: list[int]) -> Legs:
    """Legs of one layer (L0): ``keyword`` and ``vector`` lists of seqs, with their cosines."""
    legs = Legs(None, None, None, [], "hybrid")  # type: ignore[arg-type]
    for kind, seqs in lists.items():
        legs.add(kind, Layer.L0, [(Layer.L0, s) for s in seqs])
    legs.cosines.update(cosines)
    return legs


def test_agreement_is_the_keyword_first_places_mean_cosine_over_the_vector_ones() -> None:
    assert agreement([0.3, 0.1, -0.2], [0.6, 0.5, 0.4]) == pytest.approx((0.4 / 3) / 0.5)
    assert agreement([0.7], [0.5]) == 1.0  # never above 1
    assert agreement([], [0.5]) is None and agreement([0.5], []) is None
    assert agreement([0.2], [-0.1, 0.0]) is None  # nothing to compare with


def test_a_list_that_agrees_weighs_fully_and_one_that_does_not_steps_back() -> None:
    assert agreed_weight(AGREE_FULL) == 1.0 and agreed_weight(None) == 1.0
    assert agreed_weight(AGREE_FULL / 2) == pytest.approx(0.5**AGREE_POWER)
    assert agreed_weight(AGREE_FULL / 2, base=0.5) == pytest.approx(0.5 * 0.5**AGREE_POWER)
    assert agreed_weight(0.0) == 0.0


def test_legs_weigh_a_keyword_list_by_the_cosines_of_its_first_places() -> None:
    cos = {(Layer.L0, s): c for s, c in enumerate([0.7, 0.6, 0.5, 0.05, 0.02, 0.0])}
    filler = legs_of(cos, keyword=[3, 4, 5], vector=[0, 1, 2])  # long filler sharing common words
    assert filler.weights(1.0) == [pytest.approx(((0.07 / 3) / 0.6 / AGREE_FULL) ** AGREE_POWER), 1.0]
    assert filler.weights(1.0)[0] < 0.01
    evidence = legs_of(cos, keyword=[1, 0, 2], vector=[0, 1, 2])  # the names and dates asked for
    assert evidence.weights(1.0) == [1.0, 1.0]
    # A first place without a vector is left out of the mean; none known: the weight stays.
    unknown = legs_of(cos, keyword=[9, 8], vector=[0, 1, 2])
    assert unknown.weights(0.7) == [0.7, 1.0]
    assert filler.weight_of(Layer.L0)["keyword_weight"] < 0.01 and filler.weight_of(Layer.L1) == {}


def test_each_keyword_list_is_compared_with_the_vector_list_of_its_layer() -> None:
    legs = Legs(None, None, None, [], "hybrid")  # type: ignore[arg-type]
    legs.add("keyword", Layer.L1, [(Layer.L1, 1)])
    legs.add("vector", Layer.L1, [(Layer.L1, 1)])
    legs.add("keyword", Layer.L0, [(Layer.L0, 2)])
    legs.add("vector", Layer.L0, [(Layer.L0, 3)])
    legs.cosines.update({(Layer.L1, 1): 0.3, (Layer.L0, 2): 0.1, (Layer.L0, 3): 0.8})
    weights = legs.weights(1.0)
    assert weights[0] == 1.0  # the atoms' keyword first place is their vector list's own
    assert weights[2] == pytest.approx((0.125 / AGREE_FULL) ** AGREE_POWER)


def test_the_ceiling_is_first_place_in_every_list_of_the_best_layer() -> None:
    legs = Legs(None, None, None, [], "hybrid")  # type: ignore[arg-type]
    legs.add("keyword", Layer.L1, [(Layer.L1, 1)])
    legs.add("vector", Layer.L1, [(Layer.L1, 1)])
    legs.add("keyword", Layer.L0, [])  # empty: no record can be first in it
    legs.add("vector", Layer.L0, [(Layer.L0, 2)])
    assert legs.ceiling([0.5, 1.0, 1.0, 1.0], k=5) == pytest.approx(1.5 / 6)
    # fusing findings, a message and its atom can be first in every non-empty list of both layers
    assert legs.ceiling([0.5, 1.0, 1.0, 1.0], k=5, findings=True) == pytest.approx(2.5 / 6)
    assert legs.places([(Layer.L1, 1), (Layer.L0, 2)]) == {
        (Layer.L1, 1): {"keyword_rank": 1, "vector_rank": 1},
        (Layer.L0, 2): {"vector_rank": 1},
    }


def test_a_plan_without_agreement_keeps_its_static_keyword_weight() -> None:
    cos = {(Layer.L0, s): c for s, c in enumerate([0.7, 0.6, 0.5, 0.05, 0.02, 0.0])}
    filler = legs_of(cos, keyword=[3, 4, 5], vector=[0, 1, 2])
    assert filler.weights(0.8, agreed=False) == [0.8, 1.0]
    assert filler.weight_of(Layer.L0) == {"keyword_weight": 0.8}


def test_fusing_findings_a_record_stands_where_its_findings_best_record_does() -> None:
    legs = Legs(None, None, None, [], "hybrid")  # type: ignore[arg-type]
    legs.add("keyword", Layer.L1, [(Layer.L1, 9), (Layer.L1, 1)])
    legs.add("vector", Layer.L1, [(Layer.L1, 1)])
    legs.add("keyword", Layer.L0, [(Layer.L0, 2)])
    legs.add("vector", Layer.L0, [(Layer.L0, 3), (Layer.L0, 2)])
    atom, message = (Layer.L1, 1), (Layer.L0, 2)
    assert legs.places([atom, message]) == {
        atom: {"keyword_rank": 2, "vector_rank": 1},
        message: {"keyword_rank": 1, "vector_rank": 2},
    }
    legs.sources = {atom: frozenset({"m"}), message: frozenset({"m"}), (Layer.L1, 9): frozenset({"m", "n"})}
    assert legs.places([atom, message]) == {  # the atom drawn from "m" and others counts for both
        atom: {"keyword_rank": 1, "vector_rank": 1, "message_keyword_rank": 1, "message_vector_rank": 2},
        message: {"keyword_rank": 1, "vector_rank": 2, "atom_keyword_rank": 1, "atom_vector_rank": 1},
    }
    assert legs.places([(Layer.L1, 9)]) == {(Layer.L1, 9): {"keyword_rank": 1}}  # its own places
    legs.weights(1.0)
    shown = legs.weight_of(Layer.L1, legs.places([atom])[atom])
    assert set(shown) == {"keyword_weight", "message_keyword_weight"}  # vector lists weigh 1


def test_the_instructions_list_weighs_fully_only_when_its_first_is_as_close_as_the_closest_atom() -> None:
    """A named user's instruction is close to every question naming them ("where does Maya live?"
    and "Maya instructed the assistant: ..." 0.52, her facts 0.64 down to 0.54: about their mean),
    so its first is compared with the atoms' first, not with the mean of their first places."""
    facts = [(Layer.L1, s) for s in range(1, 6)]
    legs = Legs(None, None, None, [], "hybrid")  # type: ignore[arg-type]
    legs.add("keyword", Layer.L1, facts[:1])
    legs.add("vector", Layer.L1, facts)
    legs.add("instruction", Layer.L1, [(Layer.L1, 9)])
    legs.cosines.update(dict(zip(facts, [0.64, 0.59, 0.55, 0.54, 0.54], strict=True)))
    legs.cosines[(Layer.L1, 9)] = 0.52
    assert legs.weights(1.0)[2] == pytest.approx((0.52 / 0.64 / INSTRUCTION_FULL) ** AGREE_POWER)
    legs.cosines[(Layer.L1, 9)] = 0.66  # "how should answers to Maya be written?"
    assert legs.weights(1.0)[2] == 1.0
    assert legs.weights(1.0, instruction_top=0)[2] == 0.0  # no instructions' list
