"""Search across layers: primitives per layer from the store, fused once here with RRF (each
keyword list weighed by how well it agrees with the query's meaning: ``fusion``)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import numpy as np

from memstrata import lang
from memstrata.errors import EmbeddingError
from memstrata.models import (
    Atom,
    AtomFilter,
    AtomType,
    Hit,
    Layer,
    Message,
    MessageFilter,
    SearchResult,
    Tenant,
    Vectors,
    custom_keys,
    layer_of,
)
from memstrata.ports import Store
from memstrata.retrieval.asker import Askers, Reading, ReadVectors, judged_cosine
from memstrata.retrieval.documents import atom_match_text, message_match_text
from memstrata.retrieval.fusion import finding_rrf, rrf
from memstrata.retrieval.keyword import keyword_top
from memstrata.retrieval.legs import Legs
from memstrata.retrieval.presets import SearchPlan
from memstrata.retrieval.relevance import Evidence, KeywordEvidence, relevance_of
from memstrata.retrieval.request import SearchRequest
from memstrata.retrieval.term_counts import TermCounts
from memstrata.retrieval.terms import query_terms
from memstrata.retrieval.vectors import VectorState

log = logging.getLogger(__name__)
# Query embeddings run here, beside the keyword reads of the same search (see ``Searcher.search``).
# Most of these threads only wait for a pass to share (``QueryVectors``): two would cap a batch at two.
_EMBEDDING = ThreadPoolExecutor(max_workers=32, thread_name_prefix="memstrata-query-embedding")
# What a user said holds beyond its moment: how they are and want things, how the assistant is to act.
STANDING = frozenset({AtomType.PERSONA, AtomType.INSTRUCTION})


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


class Searcher:
    """Runs a ``SearchRequest``: primitives per layer from the store, fused here. Atoms expired at
    ``now()`` are never found (the store leaves them out inside its queries), unless the request's
    atom filter names another time."""

    def __init__(self, store: Store, vectors: VectorState, now: Callable[[], int] = _wall_ms) -> None:
        self._store = store
        self._vectors = vectors
        self._now = now
        self._term_counts = TermCounts(store.index.document_counts)
        self._askers = Askers(store)

    def search(self, req: SearchRequest) -> SearchResult:
        legs = self.legs(req)
        if legs.qvec is not None:  # the keyword lists' first places the vector lists did not reach
            legs.cosines.update(self._cosines(legs, legs.first_places(), legs.cosines))
        weights = legs.weights(req.plan.keyword_weight, agreed=req.plan.agreement)
        k, findings = req.plan.rrf_k, req.plan.findings and "vector" in legs.kinds
        if findings:
            legs.sources = self._sources(req.tenant, legs)
        fused = (
            finding_rrf(legs.lists, k, weights, legs.sources, legs.cosines)
            if findings
            else rrf(legs.lists, k, weights)
        )
        # A margin beyond the limit so diversification has something to promote.
        margin = req.limit * 2 if req.plan.diversify else req.limit
        legs.standing = standing_bar(req)
        judged = self._judged(legs, fused[:margin], legs.ceiling(weights, k, findings=findings))
        hits = chosen(judged, req.limit, req.min_score, req.query_floor, diversified=req.plan.diversify)
        return SearchResult(ranked(hits), legs.strategy, tuple(legs.degradations))

    def _sources(self, tenant: Tenant, legs: Legs) -> dict[tuple[Layer, int], frozenset[str]]:
        """The messages each candidate stands for (a message: itself; an atom: its sources),
        read without the records' texts: what ``finding_rrf`` groups them by."""
        seqs: dict[Layer, list[int]] = {Layer.L0: [], Layer.L1: []}
        for found in legs.lists:
            for layer, seq in found:
                seqs[layer].append(seq)
        out: dict[tuple[Layer, int], frozenset[str]] = {}
        for seq, mid in self._store.messages.ids_of(tenant, list(dict.fromkeys(seqs[Layer.L0]))).items():
            out[(Layer.L0, seq)] = frozenset((mid,))
        for seq, ids in self._store.atoms.sources_of(tenant, list(dict.fromkeys(seqs[Layer.L1]))).items():
            out[(Layer.L1, seq)] = frozenset(ids)
        return out

    def legs(self, req: SearchRequest) -> Legs:
        """The ranked lists fusion reads: per layer, the keyword list then the vector list (atoms:
        then the instructions' list, ``_instructions``)."""
        if req.atoms.at is None:
            req = replace(req, atoms=replace(req.atoms, at=self._now()))
        degradations: list[str] = []
        reading = (
            self._askers.read_as_user(req.tenant, req.query, req.layers) if req.plan.mode != "keyword" else {}
        )
        # The query is embedded in another thread while the keyword lists are read: the model's
        # matrix products and SQLite both release the GIL, so on two cores the two overlap.
        pending = _EMBEDDING.submit(self._query_vectors, req, reading, degradations)
        keyword_wanted = req.plan.mode != "vector"
        terms = query_terms(req.query) if req.plan.mode != "vector" or self._vectors.embedder is None else []
        filters = [(layer, req.messages if layer == Layer.L0 else req.atoms) for layer in req.layers]
        # The terms' record counts are read once per layer: the keyword query prunes by them and
        # the relevance of every candidate weighs its matched terms by them.
        evidence = KeywordEvidence(self._store.index, query_terms(req.query), self._term_counts)
        # Beside a vector list a keyword list drops the terms every record holds (``keyword.prune``).
        beside = req.plan.mode == "hybrid" and self._vectors.queries is not None
        keyword = (
            {layer: self._keyword(req, flt, terms, evidence, beside) for layer, flt in filters}
            if keyword_wanted
            else {}
        )
        qvec, read = pending.result()
        use_keyword = keyword_wanted or qvec is None
        if use_keyword and not keyword:  # a vector-only request whose query could not be embedded
            terms = query_terms(req.query)
            keyword = {layer: self._keyword(req, flt, terms, evidence) for layer, flt in filters}
        strategy = (
            "hybrid" if use_keyword and qvec is not None else ("vector" if qvec is not None else "keyword")
        )
        legs = Legs(req, qvec, evidence, degradations, strategy, read=read)
        for layer, flt in filters:  # keyword then vector, layer by layer: RRF breaks ties by this order
            vec = legs.vector(layer)
            found = self._store.index.vector(req.tenant, flt, vec, req.plan.depth) if vec is not None else []
            if use_keyword:
                if beside and not found:  # no vector list after all (the query could not be
                    # embedded, or a server's worker has not embedded the layer's records yet):
                    # the keyword list is the ranking, with every term
                    keyword[layer] = self._keyword(req, flt, query_terms(req.query), evidence)
                legs.add("keyword", layer, keyword[layer])
            if vec is not None:
                legs.add("vector", layer, [(layer, s.seq) for s in found])
                if layer in legs.read:  # a reading's cosines are judged, record by record
                    legs.cosines.update(self._cosines(legs, [(layer, s.seq) for s in found], {}))
                else:
                    legs.cosines.update({(layer, s.seq): s.score for s in found})
                if use_keyword and req.plan.instructions and isinstance(flt, AtomFilter) and flt.type is None:
                    self._instructions(legs, flt, vec)
        return legs

    def _instructions(self, legs: Legs, flt: AtomFilter, vec: Vectors) -> None:
        """The tenant's instructions by meaning, a list of their own (``fusion.INSTRUCTION_TOP``):
        an instruction holds for every later request within its scope ("always include semantic
        HTML5 tags when I ask about markup"), and such a request shares few words with it and is
        closer in meaning to the records of its topic than to the instruction itself."""
        req = legs.request
        found = self._store.index.vector(
            req.tenant, replace(flt, type=AtomType.INSTRUCTION), vec, req.plan.depth
        )
        keys = [(Layer.L1, s.seq) for s in found]
        legs.add("instruction", Layer.L1, keys)
        if Layer.L1 in legs.read:
            legs.cosines.update(self._cosines(legs, keys, legs.cosines))
        else:
            legs.cosines.update(
                {key: s.score for key, s in zip(keys, found, strict=True) if key not in legs.cosines}
            )

    def _judged(
        self, legs: Legs, candidates: Sequence[tuple[tuple[Layer, int], float]], ceiling: float
    ) -> Iterator[Hit]:
        """The candidates' hits in fused order, read as far as ``chosen`` reads them: hydrated
        ``limit`` and a half at first (on the proxy bench's store nine searches in ten need no
        more), the rest only when asked for, and judged one at a time."""
        req = legs.request
        first = req.limit + req.limit // 2
        rank = 0
        for batch in (candidates[:first], candidates[first:]):
            if not batch:
                continue
            found = self._hydrate(req.tenant, batch)
            yield from self._judge(legs, found, ceiling, rank)
            rank += len(found)

    def _judge(
        self,
        legs: Legs,
        found: Sequence[tuple[Message | Atom, float]],
        ceiling: float,
        ranked_before: int = 0,
    ) -> Iterator[Hit]:
        """Hits of the candidates in fused order (``rank`` counted on from ``ranked_before``), each
        scored by its fused score as a share of the ``ceiling`` (what the list is sorted by, so
        the number shown beside a hit never rises down the list) and explained by its places in
        the lists and its relevance (``Evidence``: cosine and keyword share, what the floor cuts
        by). Ordering by the relevance itself measured far lower (LoCoMo dev R@10 74.8 against
        78.5, BEAM 58.9 against 62.6, PrefEval 90.7 against 98.4; docs/benchmarks.md)."""
        keys = [(Layer.L0 if isinstance(r, Message) else Layer.L1, r.seq) for r, _ in found]
        cosines = legs.cosines
        if legs.qvec is not None:
            cosines = {**cosines, **self._cosines(legs, keys, cosines)}
        places = legs.places(keys)
        for rank, ((record, fused), key) in enumerate(zip(found, keys, strict=True), start=ranked_before + 1):
            text = message_match_text(record) if isinstance(record, Message) else atom_match_text(record)
            e = Evidence(cosines.get(key), legs.evidence.share(key[0], text), fused, rank)
            shown = min(1.0, fused / ceiling) if ceiling > 0 else 0.0
            # the cosine is the question's read as the user's (``asker.py``): why the floor passed
            read = {"read_as_user": 1} if key in legs.read_counted else {}
            stands = (
                legs.standing is not None
                and isinstance(record, Atom)
                and record.type in STANDING
                and e.cosine is not None
                and e.cosine >= legs.standing
            )
            read |= {"standing": 1} if stands else {}
            yield to_hit(
                record,
                shown,
                rank,
                {**e.explain(), **places[key], **legs.weight_of(key[0], places[key]), **read},
            )

    def _cosines(
        self, legs: Legs, keys: Iterable[tuple[Layer, int]], known: Mapping[tuple[Layer, int], float]
    ) -> dict[tuple[Layer, int], float]:
        """Cosines of the records ``keys`` names that ``known`` does not hold (found by keyword
        only); in a layer searched by a first-person question's reading, each by
        ``judged_cosine`` (noting in ``legs.read_counted`` where the reading counted)."""
        out: dict[tuple[Layer, int], float] = {}
        wanted = [key for key in keys if key not in known]
        qvec = legs.qvec
        for layer in (Layer.L0, Layer.L1):
            seqs = [seq for lay, seq in wanted if lay == layer]
            if not seqs or qvec is None:
                continue
            reading = legs.read.get(layer)
            for seq, v in self._store.index.get_vectors(legs.request.tenant, layer, seqs).items():
                if reading is None:
                    out[(layer, seq)] = float(np.dot(v, qvec))
                    continue
                out[(layer, seq)], counted = judged_cosine(v, qvec, reading)
                if counted:
                    legs.read_counted.add((layer, seq))
        return out

    def _keyword(
        self,
        req: SearchRequest,
        flt: MessageFilter | AtomFilter,
        terms: list[str],
        ev: KeywordEvidence,
        beside: bool = False,
    ) -> list[tuple[Layer, int]]:
        layer, index, depth = layer_of(flt), self._store.index, req.plan.depth
        counts = ev.counts(layer) if terms == ev.terms else None
        found = keyword_top(index, req.tenant, flt, terms, depth, counts, ev.size(layer), informative=beside)
        return [(layer, s.seq) for s in found]

    def _query_vectors(
        self, req: SearchRequest, reading: Mapping[Layer, Reading], degradations: list[str]
    ) -> tuple[Vectors | None, dict[Layer, ReadVectors]]:
        """The query's vector, and each layer's own where the query is read otherwise there: one
        call, so that the question and its reading share a forward pass."""
        texts = [req.query, *(t for r in reading.values() for t in (r.text, r.who))]
        vectors = self._embedded(texts, req.plan, degradations)
        if vectors is None:
            return None, {}
        read = {layer: ReadVectors(vectors[1 + 2 * i], vectors[2 + 2 * i]) for i, layer in enumerate(reading)}
        return vectors[0], read

    def _embedded(self, texts: list[str], plan: SearchPlan, degradations: list[str]) -> list[Vectors] | None:
        if plan.mode == "keyword":
            return None
        queries = self._vectors.queries
        if queries is None:
            degradations.append("no embedder is configured: keyword search only")
            return None
        if self._vectors.note:
            degradations.append(self._vectors.note)
            return None
        try:
            return queries.vectors(texts)
        except EmbeddingError as exc:
            log.warning("query embedding failed, searching by keyword only: %s", exc)
            degradations.append(f"query embedding failed ({exc.message}): keyword search only")
            return None

    def _hydrate(
        self, tenant: Tenant, fused: Sequence[tuple[tuple[Layer, int], float]]
    ) -> list[tuple[Message | Atom, float]]:
        """The candidates' records with their fused scores, in fused order (gone ones left out)."""
        by_layer: dict[Layer, list[int]] = {}
        for (layer, seq), _ in fused:
            by_layer.setdefault(layer, []).append(seq)
        records: dict[tuple[Layer, int], Message | Atom] = {}
        for layer, seqs in by_layer.items():
            got: Sequence[Message | Atom] = (
                self._store.messages.by_seq(tenant, seqs)
                if layer == Layer.L0
                else self._store.atoms.by_seq(tenant, seqs)
            )
            records.update({(layer, r.seq): r for r in got})
        return [(records[key], score) for key, score in fused if key in records]


def ranked(hits: Sequence[Hit]) -> tuple[Hit, ...]:
    """The hits with ``rank`` their place in this list (from 1): the floor and diversification
    leave gaps in the fused ranking (a list read 1, 2, 5, 6, ...), which ``explain["fused_rank"]``
    keeps."""
    return tuple(
        replace(h, rank=i, explain={**h.explain, "fused_rank": h.rank}) for i, h in enumerate(hits, start=1)
    )


def standing_bar(req: SearchRequest) -> float | None:
    """The cosine at which a standing atom is a finding of ``req``: its ``standing_floor`` when
    the query is a request of the user's own (the language pack's ``request``), else None. A
    preference stated once ("I avoid gluten") applies to later requests sharing none of its words
    ("what restaurants in Rome would you recommend?"; docs/design.md)."""
    if req.standing_floor is None:
        return None
    return req.standing_floor if lang.get(lang.language_of(req.query)).request(req.query) else None


def chosen(
    judged: Iterable[Hit], limit: int, min_score: float, query_floor: float, *, diversified: bool
) -> tuple[Hit, ...]:
    """The first ``limit`` of the ``judged`` hits (in fused order) whose relevance (``relevance_of``) reaches
    ``min_score``, or none at all when no judged hit reaches ``query_floor``: a query whose best
    candidate is weak is about nothing stored, while one that does find something keeps its
    weaker hits above ``min_score``. A standing atom that reached its own floor
    (``explain["standing"]``, ``standing_bar``) counts as reaching both.

    ``diversified``: a hit whose source messages are all covered by better hits is left out (an
    atom and the message it came from are one finding: the better of the two stands for both,
    and its ``source_message_ids`` lead to the other).

    ``judged`` is read only as far as needed: once ``limit`` hits are kept and one has reached
    the floor, the hits after them can change nothing (a search so judges about 19 of its 34
    candidates on the proxy bench's store, docs/benchmarks.md)."""
    kept: list[Hit] = []
    covered: set[str] = set()
    floor_met = False
    for h in judged:
        judged_as = relevance_of(h)
        standing = bool(h.explain.get("standing"))
        floor_met = floor_met or judged_as >= query_floor or standing
        if (judged_as >= min_score or standing) and len(kept) < limit:
            sources = set(h.source_message_ids)
            if not (diversified and sources and sources <= covered):
                kept.append(h)
            covered |= sources
        if floor_met and len(kept) >= limit:
            break
    return tuple(kept) if floor_met else ()


def to_hit(
    record: Message | Atom, score: float, rank: int = 0, explain: dict[str, float | int | None] | None = None
) -> Hit:
    extra: dict[str, Any] = {"rank": rank, "explain": explain or {}}
    if isinstance(record, Message):
        return Hit(
            Layer.L0,
            record.id,
            score,
            record.content,
            (record.id,),
            {  # custom keys, then the message's own fields (custom_keys leaves out the engine's)
                **custom_keys(record.metadata),
                "session_key": record.session_key,
                "role": str(record.role),
                "name": record.name,
                "timestamp": record.timestamp,
            },
            **extra,
        )
    return Hit(
        Layer.L1,
        record.id,
        score,
        record.content,
        record.source_message_ids,
        {  # the atom's own fields win over metadata keys of the same name
            **record.metadata,
            "type": str(record.type),
            "scene": record.scene_name,
            "priority": record.priority,
            "superseded_by": record.superseded_by,
            **({"pinned": True} if record.pinned else {}),
            **({"expires_at": record.expires_at} if record.expires_at is not None else {}),
        },
        **extra,
    )
