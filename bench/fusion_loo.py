"""Fusion constants chosen leave-one-conversation-out across the three dev sets at once (LoCoMo,
BEAM, PrefEval): how a keyword list's weight follows its agreement with the query's meaning
(``AGREE_TOP``, ``AGREE_FULL``, ``AGREE_POWER`` in ``memstrata.retrieval.fusion``; ``AGREE_FULL``
0 is a static weight of 1, as search had before), the RRF k, the candidate depth and whether
findings are fused (``fusion.finding_rrf``: a message and the atoms drawn from it alone share
their best places) or each record on its own (``rrf``), and how many of the instructions' list's
first records weigh it (``fusion.INSTRUCTION_TOP``; 0: the list is left out) and from which
agreement with the atoms' first it weighs fully (``fusion.INSTRUCTION_FULL``).

    python bench/fusion_loo.py --locomo DIR --beam DIR --prefeval DIR [--limit N] [--cache FILE]
        [--tops 3,5,10] [--fulls ...] [--powers ...] [--ks ...] [--depths ...] [--findings 0,1]
        [--instructions 0,1,2] [--instruction-fulls 0.8,0.9,1.0] [--slack POINTS] [--first-seen-ties]

Each DIR is a dev set imported by its checker in ../shared/eval (``locomo_check.py``,
``beam_check.py``, ``prefeval_check.py`` with ``--data-dir DIR``). Every question is searched once
(layers L1 + L0, as the checkers search) for its ranked lists before fusion (``Searcher.legs``,
the deepest depth of the grid) and the cosines of every candidate; each grid point then weighs
and fuses them as ``search`` does (``Legs.weights``, weighted RRF, twice the limit of candidates
judged, diversified) with the default relevance floor, and scores evidence R@10 (PrefEval: the
preference's message in the top 10) and R@1000tok as the checkers do.

For each conversation held out (a LoCoMo sample, a BEAM chat, a PrefEval tenant), the grid point
with the best mean of R@10 and R@1000tok over the three sets (each set's questions of the other
conversations, each set weighing the same) is chosen among those that keep every set, on those
conversations, at least at the better of its keyword lists alone and its vector lists alone and at
today's figure (``--default``), on both figures; when no point does, the one whose worst shortfall
is least. It is then measured on the held-out conversation. Prints, per set: keyword lists alone,
vector lists alone, the defaults and the held-out choice, all from the same lists; then how often
each value of each constant was chosen (the spread). (An earlier grid of static keyword weights
kept 1.0 under the same condition; without it every fold chose 0.35, k 5, depth 200: PrefEval R@10
+9.5, BEAM +1.9, LoCoMo -4.7. One vector list for all layers, by cosine, and the kept hits listed
by their relevance were in that grid too; no fold chose either.)
"""

from __future__ import annotations

import argparse
import itertools
import os
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _folds import (  # a sibling module, not a package
    BUDGET,
    LOADERS,
    Question,
    held_out,
    leave_one_out,
    measure,
    ntokens,
    set_masks,
    spread,
    trained,
)

TOPS = (3, 5, 10)
FULLS = (0.0, 0.6, 0.7, 0.8, 0.9, 1.0)  # 0: the keyword list always weighs 1
POWERS = (1.0, 2.0, 3.0)
KS = (5.0, 10.0, 20.0)
DEPTHS = (50, 100, 200)
FINDINGS = (0, 1)  # 1: fusion.finding_rrf, 0: rrf record by record
INSTRUCTIONS = (0, 1, 2)  # the instructions' list's first places its weight reads (0: left out)
INSTRUCTION_FULLS = (0.8, 0.9, 1.0)  # its agreement from which it weighs fully
# top, full, power, k, depth, findings, instructions' top, instructions' full
Point = tuple[int, float, float, float, int, int, int, float]


def _floor() -> Any:
    from memstrata.settings import SearchSettings

    return SearchSettings()


FLOOR = _floor()  # the default relevance floor, as the checkers search


def code_point() -> str:
    """Today's point as the code holds it (``--default``): read from the constants search uses,
    so that the default cannot fall behind them as a copy written here did."""
    from memstrata.retrieval import fusion
    from memstrata.retrieval.presets import HYBRID

    instructions = fusion.INSTRUCTION_TOP if HYBRID.instructions else 0
    point = (fusion.AGREE_TOP, fusion.AGREE_FULL, fusion.AGREE_POWER, FLOOR.rrf_k, FLOOR.candidates)
    return ",".join(str(v) for v in (*point, int(HYBRID.findings), instructions, fusion.INSTRUCTION_FULL))


# --first-seen-ties: findings the lists tie break by first-seen order, as search did before it broke
# them by the finding's cosine (``fusion.finding_rrf``)
FIRST_SEEN_TIES = False


def lists_of(data_dir: Path, questions: Sequence[Question]) -> list[dict[str, Any]]:
    """Per question: its legs (ranked lists by kind and layer, every candidate's cosine) and each
    candidate's source ids and token count."""
    from memstrata import Memory
    from memstrata.models import Layer, Tenant
    from memstrata.retrieval.documents import atom_match_text, message_match_text
    from memstrata.retrieval.presets import HYBRID
    from memstrata.retrieval.relevance import Evidence
    from memstrata.retrieval.request import SearchRequest

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
            if legs.qvec is not None:
                legs.cosines.update(searcher._cosines(legs, keys, legs.cosines))
            info: dict[tuple[Any, int], tuple[frozenset[str], int]] = {}
            texts: dict[tuple[Any, int], str] = {}
            for m in store.messages.by_seq(tenant, [seq for layer, seq in keys if layer == Layer.L0]):
                info[(Layer.L0, m.seq)] = (frozenset([m.id]), ntokens(m.content))
                texts[(Layer.L0, m.seq)] = message_match_text(m)
            for a in store.atoms.by_seq(tenant, [seq for layer, seq in keys if layer == Layer.L1]):
                info[(Layer.L1, a.seq)] = (frozenset(a.source_message_ids), ntokens(a.content))
                texts[(Layer.L1, a.seq)] = atom_match_text(a)
            relevance = {  # what the floor reads, as search judges it
                key: Evidence(legs.cosines.get(key), legs.evidence.share(key[0], text), 0.0, 0).score()
                for key, text in texts.items()
            }
            kept = {"kinds": legs.kinds, "layers": legs.layers, "lists": legs.lists, "cosines": legs.cosines}
            out.append({**kept, "info": info, "relevance": relevance})
    return out


def fused_hits(lg: dict[str, Any], point: Point, only: str | None = None) -> list[tuple[frozenset[str], int]]:
    """What ``search`` returns (limit 50) from these lists: ``Legs.weights`` at ``point``,
    weighted RRF, twice the limit judged, diversified, with the default relevance floor (as
    ``chosen`` applies it: nothing when no judged candidate reaches ``search.query_floor``, else
    the hits down to ``search.min_score``); ``only`` keeps the lists of one kind."""
    from memstrata.retrieval.fusion import finding_rrf, rrf
    from memstrata.retrieval.legs import Legs

    legs = Legs(None, None, None, [], "hybrid", lg["kinds"], lg["lists"], lg["cosines"], lg["layers"])  # type: ignore[arg-type]
    top, full, power, k, depth, findings, instructions, instruction_full = point
    weights = (
        legs.weights(1.0, top, full, power, instruction_top=instructions, instruction_full=instruction_full)
        if full
        else [float(kind != "instruction" or instructions > 0) for kind in legs.kinds]
    )
    lists = [found[:depth] for found in legs.lists]
    sources = {key: got[0] for key, got in lg["info"].items()}
    if only is not None:
        weights = [w for w, kind in zip(weights, legs.kinds, strict=True) if kind == only]
        lists = [found for found, kind in zip(lists, legs.kinds, strict=True) if kind == only]
        if only == "vector":  # one list by cosine, as a vector store would
            lists = [sorted({key for found in lists for key in found}, key=lambda key: -legs.cosines[key])]
            weights = [1.0]
    kept: list[tuple[frozenset[str], int]] = []
    covered: set[str] = set()
    floor_met = False
    closeness = None if FIRST_SEEN_TIES else lg["cosines"]  # ties between findings, as search breaks them
    fused = (
        finding_rrf(lists, k, weights, sources, closeness)
        if findings and only is None
        else rrf(lists, k, weights)
    )
    for key, _ in fused[: 2 * 50]:
        if key not in lg["info"]:
            continue
        relevance = lg["relevance"].get(key, 0.0)
        floor_met = floor_met or relevance >= FLOOR.query_floor
        sources, size = lg["info"][key]
        if relevance >= FLOOR.min_score and len(kept) < 50:
            if not (sources and sources <= covered):
                kept.append((sources, size))
            covered |= sources
        if floor_met and len(kept) >= 50:
            break
    return kept if floor_met else []


def figures(
    questions: Sequence[Question], legs: Sequence[dict[str, Any]], grid: Sequence[Point], cache: Path | None
) -> Any:
    """Each grid point's R@10 and R@1000tok per question, shape (points, questions, 2), then the
    same of the keyword lists alone and the vector lists alone, shape (2, questions, 2) (kept
    beside the lists' cache)."""
    kept = cache.with_suffix(".figures.npz") if cache else None
    if kept and kept.exists():
        got = np.load(kept)
        return got["grid"], got["legs"]
    pairs = list(zip(questions, legs, strict=True))
    figure = np.array([[measure(q, fused_hits(lg, g)) for q, lg in pairs] for g in grid])
    alone = np.array(
        [
            [measure(q, fused_hits(lg, grid[0], only=kind)) for q, lg in pairs]
            for kind in ("keyword", "vector")
        ]
    )
    if kept:
        np.savez(kept, grid=figure, legs=alone)
    return figure, alone


def choose(figure: Any, alone: Any, sets_of: Sequence[Any], keep: Any, today: int, slack: float = 0.0) -> int:
    """The grid point chosen on the questions ``keep`` keeps (see the module docstring); a set may
    fall ``slack`` below today's figure (a share: 0.002 is 0.2 points)."""
    train = trained(sets_of, keep)
    if not train:  # the only conversation: nothing to choose by
        return today
    per_set = np.stack([figure[:, m].mean(axis=1) for m in train], axis=1)  # points, sets, 2
    legs = np.stack([alone[:, m].mean(axis=1) for m in train], axis=1).max(axis=0)  # sets, 2
    floor = np.maximum(legs, per_set[today] - slack)
    shortfall = np.clip(floor - per_set, 0.0, None).max(axis=(1, 2))
    mean = per_set.mean(axis=(1, 2))
    best = shortfall.min()  # 0 when some point keeps every set above its floor
    return int(np.argmax(np.where(shortfall <= best + 1e-9, mean, -1.0)))  # the first of equals


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in LOADERS:
        ap.add_argument(f"--{name}", type=Path)
    ap.add_argument("--limit", type=int, default=0, help="questions per set (0: all)")
    ap.add_argument("--cache", type=Path, help="keep the lists read here, and read them back on the next run")
    ap.add_argument(
        "--default",
        default=code_point(),
        help="today's top,full,power,k,depth,findings,instructions,instruction_full (full 0: "
        "weight 1; findings 1: finding_rrf; instructions 0: no instructions' list); by default "
        "the code's own (%(default)s)",
    )
    ap.add_argument(
        "--slack",
        type=float,
        default=0.0,
        help="points a set may fall below today's figure on the other conversations (one LoCoMo "
        "question of 760 is 0.13 points of R@10); never below its better leg alone",
    )
    for name, values in (
        ("tops", TOPS),
        ("fulls", FULLS),
        ("powers", POWERS),
        ("ks", KS),
        ("depths", DEPTHS),
        ("findings", FINDINGS),
        ("instructions", INSTRUCTIONS),
        ("instruction-fulls", INSTRUCTION_FULLS),
    ):
        ap.add_argument(f"--{name}", default=",".join(str(v) for v in values), help="the grid's values")
    ap.add_argument(
        "--first-seen-ties",
        action="store_true",
        help="findings the lists tie: first seen leads (before: the closer finding)",
    )
    a = ap.parse_args()
    global FIRST_SEEN_TIES
    FIRST_SEEN_TIES = a.first_seen_ties
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sets = {
        name: (getattr(a, name), load()) for name, load in LOADERS.items() if getattr(a, name) is not None
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
    top, full, power, k, depth, findings, instructions, instruction_full = a.default.split(",")
    today: Point = (
        int(top),
        float(full),
        float(power),
        float(k),
        int(depth),
        int(findings),
        int(instructions),
        float(instruction_full),
    )
    tops, powers = [int(v) for v in a.tops.split(",")], [float(v) for v in a.powers.split(",")]
    grid = [
        g
        for g in itertools.product(
            tops,
            [float(v) for v in a.fulls.split(",")],
            powers,
            [float(v) for v in a.ks.split(",")],
            [int(v) for v in a.depths.split(",")],
            [int(v) for v in a.findings.split(",")],
            [int(v) for v in a.instructions.split(",")],
            [float(v) for v in a.instruction_fulls.split(",")],
        )
        if g[1] or (g[0], g[2]) == (tops[0], powers[0])  # a static weight: one point per k, depth
    ]
    if today not in grid:
        grid.insert(0, today)
    figure, alone = figures(questions, legs, grid, a.cache)
    sets_of, at = set_masks(questions), grid.index(today)
    chosen = leave_one_out(
        questions, lambda keep: grid[choose(figure, alone, sets_of, keep, at, a.slack / 100)]
    )
    report(questions, figure, alone, grid, chosen, today)
    return 0


def report(
    questions: Sequence[Question],
    figure: Any,
    alone: Any,
    grid: Sequence[Point],
    chosen: dict[str, Point],
    today: Point,
) -> None:
    """Per set the figures of the keyword lists alone, the vector lists alone, today's point and
    each conversation's held-out choice; then the spread of each constant over the folds."""
    held = np.array(held_out(questions, dict(zip(grid, figure, strict=True)), chosen))
    for name in dict.fromkeys(q.dataset for q in questions):
        mask = np.array([q.dataset == name for q in questions])
        cells = [
            (label, got[mask].mean(axis=0) * 100)
            for label, got in (
                ("keyword only", alone[0]),
                ("vector only", alone[1]),
                ("defaults", figure[grid.index(today)]),
                ("held-out choice", held),
            )
        ]
        print(
            f"{name} (n={int(mask.sum())}): "
            + "; ".join(f"{label} R@10 {r10:.1f} R@{BUDGET}tok {rtok:.1f}" for label, (r10, rtok) in cells)
        )
    for i, label in enumerate(
        (
            "AGREE_TOP",
            "AGREE_FULL",
            "AGREE_POWER",
            "rrf_k",
            "depth",
            "findings",
            "INSTRUCTION_TOP",
            "INSTRUCTION_FULL",
        )
    ):
        print(f"{label}: chosen in {len(chosen)} folds: {spread(c[i] for c in chosen.values())}")


if __name__ == "__main__":
    sys.exit(main())
