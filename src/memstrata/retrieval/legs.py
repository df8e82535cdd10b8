"""A search's ranked lists before fusion, and what fusion reads of them: each keyword list's
weight (``fusion.agreement`` with the vector list of its layer), the most fused score a record can
have, and where a candidate stands in each list (what a hit's explanation shows)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memstrata.models import Layer, Vectors
from memstrata.retrieval.asker import ReadVectors
from memstrata.retrieval.fusion import (
    AGREE_FULL,
    AGREE_POWER,
    AGREE_TOP,
    INSTRUCTION_FULL,
    INSTRUCTION_TOP,
    agreed_weight,
    agreement,
)
from memstrata.retrieval.relevance import KeywordEvidence

if TYPE_CHECKING:
    from memstrata.retrieval.request import SearchRequest


@dataclass(slots=True)
class Legs:
    """A search's ranked lists before fusion (``kinds[i]`` says which leg made ``lists[i]``, of
    layer ``layers[i]``), with what judging their candidates needs: the query's vector, the
    cosines known so far (the vector lists', then the keyword lists' first places'), the keyword
    evidence and what went less well than asked. ``read``: a layer's own vectors where a
    first-person question is read as said of the user (``asker.py``); its cosines are judged
    (``judged_cosine``), and ``read_counted`` holds the records where the reading counted."""

    request: SearchRequest
    qvec: Vectors | None
    evidence: KeywordEvidence
    degradations: list[str]
    strategy: str
    kinds: list[str] = field(default_factory=list)
    lists: list[list[tuple[Layer, int]]] = field(default_factory=list)
    cosines: dict[tuple[Layer, int], float] = field(default_factory=dict)
    layers: list[Layer] = field(default_factory=list)
    applied: list[float] = field(default_factory=list)  # the weights ``weights`` gave last
    read: dict[Layer, ReadVectors] = field(default_factory=dict)
    read_counted: set[tuple[Layer, int]] = field(default_factory=set)
    # the messages each candidate stands for, where findings are fused (``fusion.finding_rrf``)
    sources: dict[tuple[Layer, int], frozenset[str]] = field(default_factory=dict)
    standing: float | None = None  # the cosine a standing atom is a finding at (``search.standing_bar``)

    def vector(self, layer: Layer) -> Vectors | None:
        """The query vector ``layer`` is searched by."""
        reading = self.read.get(layer)
        return reading.read if reading is not None else self.qvec

    def add(self, kind: str, layer: Layer, found: list[tuple[Layer, int]]) -> None:
        self.kinds.append(kind)
        self.layers.append(layer)
        self.lists.append(found)

    def weighed(self) -> bool:
        """Whether a keyword list has a vector list beside it (alone, it is the ranking)."""
        return {"keyword", "vector"} <= set(self.kinds)

    def first_places(self, top: int = AGREE_TOP) -> list[tuple[Layer, int]]:
        """The keyword lists' first ``top`` records, whose cosines their weights read."""
        if not self.weighed():
            return []
        return [
            key
            for kind, found in zip(self.kinds, self.lists, strict=True)
            if kind == "keyword"
            for key in found[:top]
        ]

    def weights(
        self,
        keyword_weight: float,
        top: int = AGREE_TOP,
        full: float = AGREE_FULL,
        power: float = AGREE_POWER,
        *,
        agreed: bool = True,
        instruction_top: int = INSTRUCTION_TOP,
        instruction_full: float = INSTRUCTION_FULL,
    ) -> list[float]:
        """RRF weights: a vector list's 1; a keyword list's ``keyword_weight`` scaled by its
        ``agreement`` with the vector list of its layer (``fusion``), from the cosines known
        (a first place without a vector is left out of the mean); 1 with no vector list. The
        instructions' list weighs 1 scaled by the agreement of its first ``instruction_top``
        records with as many first records of the atoms' vector list (full from
        ``instruction_full``; ``instruction_top`` 0: it weighs nothing), with the plan's static
        weight as well."""
        if not self.weighed():
            self.applied = [1.0] * len(self.kinds)
            return self.applied
        if not agreed:  # the plan's static weight
            self.applied = [keyword_weight if kind == "keyword" else 1.0 for kind in self.kinds]
            self.applied = [
                w * (instruction_top > 0) if kind == "instruction" else w
                for kind, w in zip(self.kinds, self.applied, strict=True)
            ]
            return self.applied
        vector = {
            layer: found[:top]
            for kind, layer, found in zip(self.kinds, self.layers, self.lists, strict=True)
            if kind == "vector"
        }
        out = []
        for kind, layer, found in zip(self.kinds, self.layers, self.lists, strict=True):
            if kind == "vector":
                out.append(1.0)
                continue
            if kind == "keyword":
                first, best_of, base, at = found[:top], vector.get(layer, []), keyword_weight, full
            else:  # the instructions' first against the layer's own first: like with like
                first, at = found[:instruction_top], instruction_full
                best_of, base = vector.get(layer, [])[: max(1, instruction_top)], 1.0
            ours = [self.cosines[key] for key in first if key in self.cosines]
            best = [self.cosines[key] for key in best_of if key in self.cosines]
            weighs = kind == "keyword" or instruction_top > 0
            out.append(agreed_weight(agreement(ours, best), base, at, power) if weighs else 0.0)
        self.applied = out
        return out

    def weight_of(self, layer: Layer, shown: Iterable[str] = ()) -> dict[str, float]:
        """``{"keyword_weight": w}``: the weight ``weights`` gave the keyword list of ``layer``
        beside a vector list; with the weight of every other list not a vector one whose place is
        among ``shown`` (``places``' names: ``instruction_rank`` -> ``instruction_weight``). Empty
        when no list weighed anything against a vector list."""
        if not self.weighed() or len(self.applied) != len(self.kinds):
            return {}
        names = set(shown)
        out: dict[str, float] = {}
        for kind, lay, w in zip(self.kinds, self.layers, self.applied, strict=True):
            name = _rank_name(kind, lay, layer)
            if kind == "keyword" and lay == layer:
                out["keyword_weight"] = round(w, 4)
            elif kind != "vector" and name in names:
                out[name.removesuffix("_rank") + "_weight"] = round(w, 4)
        return out

    def ceiling(self, weights: Sequence[float], k: float, *, findings: bool = False) -> float:
        """The most fused score a record can have (the share of it is the score a hit shows):
        first in every non-empty list of its layer, for the layer where that is most; with
        ``findings`` (``fusion.finding_rrf``) first in every non-empty list, of any layer."""
        most: dict[Layer | None, float] = {}
        for layer, found, w in zip(self.layers, self.lists, weights, strict=True):
            if found:
                at = None if findings else layer
                most[at] = most.get(at, 0.0) + w / (k + 1)
        return max(most.values(), default=0.0)

    def places(self, keys: Iterable[tuple[Layer, int]]) -> dict[tuple[Layer, int], dict[str, int]]:
        """Where each of ``keys`` stands in the lists holding it (from 1; a list missing: not in
        it): ``{"keyword_rank": 3, "vector_rank": 1}`` in its own layer's lists, and
        ``instruction_rank`` among the instructions. Where findings are fused (``sources``), a
        record standing for one message stands where its finding's best record does, as its score
        counts it, the other layer's lists included (``message_keyword_rank``,
        ``atom_vector_rank``, ...)."""
        wanted = set(keys)
        out: dict[tuple[Layer, int], dict[str, int]] = {key: {} for key in wanted}
        by_source: dict[str, list[tuple[Layer, int]]] = {}
        for key in wanted:
            if len(named := self.sources.get(key, frozenset())) == 1:
                by_source.setdefault(next(iter(named)), []).append(key)
        for kind, lay, found in zip(self.kinds, self.layers, self.lists, strict=True):
            for place, key in enumerate(found, start=1):
                targets = {key} & wanted
                for source in self.sources.get(key, ()):
                    targets.update(by_source.get(source, ()))
                for target in targets:
                    name = _rank_name(kind, lay, target[0])
                    if place < out[target].get(name, place + 1):
                        out[target][name] = place
        return out


_FORM = {Layer.L0: "message", Layer.L1: "atom"}


def _rank_name(kind: str, list_layer: Layer, layer: Layer) -> str:
    """What a place in a ``kind`` list of ``list_layer`` is called beside a record of ``layer``."""
    return (
        f"{kind}_rank" if kind == "instruction" or list_layer == layer else f"{_FORM[list_layer]}_{kind}_rank"
    )
