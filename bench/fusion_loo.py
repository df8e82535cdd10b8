"""Fusion constants (a keyword list's RRF weight, the RRF k, the candidate depth) chosen
leave-one-conversation-out across the three dev sets at once: LoCoMo, BEAM and PrefEval.

    python bench/fusion_loo.py --locomo DIR --beam DIR --prefeval DIR [--limit N] [--out FILE]

Each DIR is a dev set imported by its checker in ../shared/eval (``locomo_check.py``,
``beam_check.py``, ``prefeval_check.py`` with ``--data-dir DIR``). Every question is searched once
(layers L1 + L0, as the checkers search) for its ranked lists before fusion (``Searcher.legs``,
the deepest depth of the grid); each grid point then fuses them as ``search`` does (weighted RRF,
twice the limit of candidates judged, diversified) with no relevance floor, and scores evidence
R@10 (PrefEval: the preference's message in the top 10) and R@1000tok as the checkers do.

For each conversation held out (a LoCoMo sample, a BEAM chat, a PrefEval tenant), the grid point
with the best mean of R@10 and R@1000tok over the three sets (each set's questions of the other
conversations, each set weighing the same) is chosen among those that keep every set at least at
today's figure (``--default``) on those conversations, and measured on the held-out conversation.
(Without that condition every fold chose keyword weight 0.35, k 5, depth 200: PrefEval R@10 +9.5,
BEAM +1.9, LoCoMo -4.7.) Two alternatives are in the grid beside the constants: one vector list
for all layers, by cosine, and the kept hits listed by their relevance; search has neither, as no
fold chose them. Prints, per set:
keyword lists alone, vector lists alone, the current defaults and the held-out choice, all from the
same lists; then how often each value of each constant was chosen (the spread).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import pickle
import statistics
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
# ../shared beside the clone (a worktree of it: one level further up)
SHARED = next(
    (p / "shared" for p in REPO.parents if (p / "shared" / "eval").is_dir()), REPO.parent / "shared"
)
sys.path.insert(0, str(SHARED / "eval"))

WEIGHTS = (0.0, 0.2, 0.35, 0.5, 0.7, 1.0)
KS = (5.0, 10.0, 20.0, 60.0)
DEPTHS = (50, 100, 200)
MERGE = (False, True)
BY_RELEVANCE = (False, True)
LIMIT = 10
BUDGET = 1000  # tokens, as the checkers count them (words / 0.75)


@dataclass(frozen=True)
class Question:
    dataset: str
    group: str  # the conversation (tenant) it belongs to
    text: str
    evidence: frozenset[str]  # message ids


def ntokens(text: str) -> int:
    return max(1, round(len(text.split()) / 0.75))


def locomo_questions() -> list[Question]:
    from locomo_common import load  # type: ignore[import-not-found]

    out = []
    for sid, _, _, _, qs in load(str(SHARED / "data" / "locomo" / "locomo-dev.json")):
        out += [Question("locomo", sid, q.question, frozenset(f"{sid}/{e}" for e in q.evidence)) for q in qs]
    return out


def beam_questions() -> list[Question]:
    qs = json.loads((SHARED / "data" / "beam" / "questions-dev.json").read_text())
    return [
        Question("beam", q["user"], q["question"], frozenset(f"{q['user']}/{e}" for e in q["evidence"]))
        for q in qs
    ]


def prefeval_questions() -> list[Question]:
    from prefeval_check import build  # type: ignore[import-not-found]

    src = SHARED / "data" / "prefeval"
    _, qs = build(
        json.loads((src / "explicit.json").read_text()), json.loads((src / "filler.json").read_text())
    )
    return [Question("prefeval", q["user"], q["question"], frozenset([q["id"]])) for q in qs]


def lists_of(data_dir: Path, questions: Sequence[Question]) -> list[dict[str, Any]]:
    """Per question: its ranked lists by kind, and each candidate's source ids and token count."""
    from memstrata import Memory
    from memstrata.models import Layer, Tenant
    from memstrata.retrieval.presets import HYBRID
    from memstrata.retrieval.search import SearchRequest

    out = []
    with Memory.open(data_dir, read_only=True) as mem:
        core = mem._async
        searcher, store = core._searcher, core._store
        for q in questions:
            tenant = Tenant(q.group, "default")
            req = SearchRequest(
                tenant, q.text, (Layer.L1, Layer.L0), 50, plan=HYBRID.with_(depth=max(DEPTHS))
            )
            legs = searcher.legs(req)
            keys = {key for found in legs.lists for key in found}
            info: dict[tuple[Any, int], tuple[frozenset[str], int]] = {}
            l0 = [seq for layer, seq in keys if layer == Layer.L0]
            l1 = [seq for layer, seq in keys if layer == Layer.L1]
            for m in store.messages.by_seq(tenant, l0):
                info[(Layer.L0, m.seq)] = (frozenset([m.id]), ntokens(m.content))
            for a in store.atoms.by_seq(tenant, l1):
                info[(Layer.L1, a.seq)] = (frozenset(a.source_message_ids), ntokens(a.content))
            out.append(
                {
                    "kinds": legs.kinds,
                    "lists": legs.lists,
                    "info": info,
                    "cosines": legs.cosines,
                    "relevance": relevance_of(store, legs, tenant, keys),
                }
            )
    return out


def relevance_of(store: Any, legs: Any, tenant: Any, keys: set[Any]) -> dict[Any, float]:
    """Each candidate's relevance (``Hit.score``: the cosine and keyword share, weighed as search does)."""
    from memstrata.models import Layer
    from memstrata.retrieval.documents import atom_match_text, message_vector_text
    from memstrata.retrieval.relevance import Evidence

    cos = dict(legs.cosines)
    for layer in (Layer.L0, Layer.L1):
        missing = [seq for lay, seq in keys if lay == layer and (lay, seq) not in cos]
        if legs.qvec is not None and missing:
            got = store.index.get_vectors(tenant, layer, missing)
            cos.update({(layer, seq): float(v @ legs.qvec) for seq, v in got.items()})
    texts = {
        (Layer.L0, m.seq): message_vector_text(m)
        for m in store.messages.by_seq(tenant, [s for lay, s in keys if lay == Layer.L0])
    }
    texts |= {
        (Layer.L1, a.seq): atom_match_text(a)
        for a in store.atoms.by_seq(tenant, [s for lay, s in keys if lay == Layer.L1])
    }
    return {
        key: Evidence(cos.get(key), legs.evidence.share(key[0], text), 0.0, 0).score()
        for key, text in texts.items()
    }


def merged(legs: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """The lists with every layer's vector list made one, by cosine (a message's and an atom's
    cosines with the query compared directly, as one vector store would)."""
    kinds = [k for k in legs["kinds"] if k != "vector"]
    lists = [found for k, found in zip(legs["kinds"], legs["lists"], strict=True) if k != "vector"]
    vectors = [
        key for k, found in zip(legs["kinds"], legs["lists"], strict=True) if k == "vector" for key in found
    ]
    if vectors:
        kinds.append("vector")
        lists.append(sorted(vectors, key=lambda key: -legs["cosines"].get(key, -1.0)))
    return kinds, lists


def fused_hits(
    legs: dict[str, Any],
    weight: float,
    k: float,
    depth: int,
    merge: bool = False,
    by_relevance: bool = False,
    only: str | None = None,
) -> list[tuple[frozenset[str], int]]:
    """What ``search`` returns (limit 50) from these lists: weighted RRF, twice the limit judged,
    diversified; ``merge``: one vector list for all layers; ``only`` keeps the lists of one kind."""
    scores: dict[Any, float] = {}
    both = len(set(legs["kinds"])) == 2 and only is None
    kinds, lists = merged(legs) if merge else (legs["kinds"], legs["lists"])
    for kind, found in zip(kinds, lists, strict=True):
        if only is not None and kind != only:
            continue
        w = weight if both and kind == "keyword" else 1.0
        for rank, key in enumerate(found[:depth], start=1):
            scores[key] = scores.get(key, 0.0) + w / (k + rank)
    order = sorted(scores, key=lambda key: -scores[key])[: 2 * 50]
    kept: list[tuple[frozenset[str], int]] = []
    covered: set[str] = set()
    rel: list[float] = []
    for key in order:
        if key not in legs["info"]:
            continue
        sources, size = legs["info"][key]
        if not (sources and sources <= covered):
            kept.append((sources, size))
            rel.append(legs["relevance"].get(key, 0.0))
        covered |= sources
        if len(kept) >= 50:
            break
    if by_relevance:  # the kept hits shown in the order of the relevance shown beside them
        kept = [h for _, h in sorted(zip(rel, kept, strict=True), key=lambda p: -p[0])]
    return kept


def measure(q: Question, hits: list[tuple[frozenset[str], int]]) -> tuple[float, float]:
    top: set[str] = set().union(*[s for s, _ in hits[:LIMIT]]) if hits else set()
    got: set[str] = set()
    used = 0
    for sources, size in hits:
        used += size
        if used > BUDGET:
            break
        got |= sources
    n = len(q.evidence)
    if q.dataset == "prefeval":
        return float(bool(q.evidence & top)), float(bool(q.evidence & got))
    return len(q.evidence & top) / n, len(q.evidence & got) / n


def figures(
    questions: Sequence[Question], legs: Sequence[dict[str, Any]], grid: Sequence[Any], cache: Path | None
) -> Any:
    """Each grid point's figure per question: the mean of its R@10 and R@1000tok (kept beside the
    lists' cache)."""
    kept = cache.with_suffix(".figures.npy") if cache else None
    if kept and kept.exists():
        return np.load(kept)
    figure = np.array(
        [
            [sum(measure(q, fused_hits(lg, *g))) / 2 for q, lg in zip(questions, legs, strict=True)]
            for g in grid
        ]
    )
    if kept:
        np.save(kept, figure)
    return figure


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--locomo", type=Path)
    ap.add_argument("--beam", type=Path)
    ap.add_argument("--prefeval", type=Path)
    ap.add_argument("--limit", type=int, default=0, help="questions per set (0: all)")
    ap.add_argument("--cache", type=Path, help="keep the lists read here, and read them back on the next run")
    ap.add_argument(
        "--default", default="1.0,10,100,0,0", help="the current weight,k,depth,merge,by relevance"
    )
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sets = {
        name: (where, questions_of())
        for name, where, questions_of in (
            ("locomo", a.locomo, locomo_questions),
            ("beam", a.beam, beam_questions),
            ("prefeval", a.prefeval, prefeval_questions),
        )
        if where is not None
    }
    questions: list[Question] = []
    legs: list[dict[str, Any]] = []
    if a.cache and a.cache.exists():  # the lists of an earlier run: only the grid is computed again
        questions, legs = pickle.loads(a.cache.read_bytes())
    for name, (data_dir, qs) in sets.items() if not legs else ():
        qs = qs[: a.limit] if a.limit else qs
        questions += qs
        legs += lists_of(data_dir, qs)
        print(f"{name}: {len(qs)} questions read", flush=True)
    if a.cache and not a.cache.exists():
        a.cache.write_bytes(pickle.dumps((questions, legs)))
    grid = list(itertools.product(WEIGHTS, KS, DEPTHS, MERGE, BY_RELEVANCE))
    w, k, d, m, r = a.default.split(",")
    today = (float(w), float(k), int(d), m == "1", r == "1")
    figure = figures(questions, legs, grid, a.cache)
    groups = list(dict.fromkeys(q.group for q in questions))
    sets_of = [
        np.array([q.dataset == name for q in questions])
        for name in dict.fromkeys(q.dataset for q in questions)
    ]
    chosen: dict[str, tuple[float, float, int, bool, bool]] = {}
    for group in groups:
        out = np.array([q.group == group for q in questions])
        # per set, the mean of its questions outside the held-out conversation; each set weighs the same
        per_set = np.stack(
            [figure[:, mask & ~out].mean(axis=1) for mask in sets_of if (mask & ~out).any()], axis=1
        )
        # only points that keep every set at least at today's figure (on these conversations)
        allowed = (per_set >= per_set[grid.index(today)] - 1e-9).all(axis=1)
        score = np.where(allowed, per_set.mean(axis=1), -1.0)
        chosen[group] = grid[int(np.argmax(score))]  # the first of equals: the grid's order
    report(questions, legs, chosen, today)
    return 0


def report(
    questions: Sequence[Question],
    legs: Sequence[dict[str, Any]],
    chosen: dict[str, tuple[float, float, int, bool, bool]],
    default: tuple[float, float, int, bool, bool],
) -> None:
    rows: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for q, lg in zip(questions, legs, strict=True):
        w, k, d, m, r = default
        row = rows.setdefault(
            q.dataset, {"keyword only": [], "vector only": [], "defaults": [], "held-out choice": []}
        )
        row["keyword only"].append(measure(q, fused_hits(lg, 1.0, k, d, m, only="keyword")))
        row["vector only"].append(measure(q, fused_hits(lg, 1.0, k, d, m, only="vector")))
        row["defaults"].append(measure(q, fused_hits(lg, w, k, d, m, r)))
        row["held-out choice"].append(measure(q, fused_hits(lg, *chosen[q.group])))
    for name, row in rows.items():
        cells = [
            f"{label} R@10 {100 * statistics.mean(v[0] for v in vals):.1f} "
            f"R@{BUDGET}tok {100 * statistics.mean(v[1] for v in vals):.1f}"
            for label, vals in row.items()
        ]
        print(f"{name} (n={len(row['defaults'])}): " + "; ".join(cells))
    for i, label in enumerate(("keyword_weight", "rrf_k", "depth", "one vector list", "by relevance")):
        spread = Counter(c[i] for c in chosen.values())
        print(
            f"{label}: chosen in {len(chosen)} folds: "
            + ", ".join(f"{v} x{n}" for v, n in sorted(spread.items()))
        )


if __name__ == "__main__":
    sys.exit(main())
