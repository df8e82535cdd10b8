"""Index and extraction constants chosen leave-one-conversation-out across the three dev sets at
once (LoCoMo, BEAM, PrefEval), as ``fusion_loo.py`` chooses the fusion constants.

    python bench/constants_loo.py --locomo DIR --beam DIR --prefeval DIR --work DIR
        [--constant previous_turn|small_talk_words|material_chars|preferences_share|recall_diversify]
        [--limit N] [--best-mean]

Each DIR is a dev set imported by its checker in ../shared/eval (``--data-dir DIR``); it is copied
into ``--work`` once per value of the grid, never changed. A constant is set in this process, its
effect made on the copy, and every question searched as the checkers search (limit 50, default
layers and settings; PrefEval's top 10 with limit 10); each question scores its evidence R@10
(PrefEval: the preference's message in the top 10) and R@1000tok. Figures per value are kept in ``--work`` (a rerun reads them back).

- ``previous_turn`` (``retrieval/documents.CONTEXT_FOR_CHARS``: a message of at most this many
  characters is keyword-indexed with the start of the turn before it). Only the keyword texts
  change (the vectors never held the previous turn), so a value costs a rewrite of those texts
  (``rewrite_keyword_texts``, what ``memstrata reindex`` does), not an import.
- ``small_talk_words`` (``engines/offline/l1/classify.SMALL_TALK_WORDS``) and ``material_chars``
  (``engines/offline/l1/extract.MATERIAL_CHARS``) change what the offline engine extracts: each
  DIR is then an import made without the pipeline (``memstrata import --no-process``: messages
  and their vectors), and a value costs the pipeline's run on a copy (``run_all``).
- ``preferences_share`` (``engines/offline/l3/writer.PREFERENCES_SHARE``: at most this share of a
  person's persona room for their stated preferences) changes what ``recall`` injects, not what
  search finds: each DIR is then a checker's import with its pipeline, a value costs the persona
  rewritten on a copy (L3, forced, for every tenant), and every question is asked of ``recall``
  as the checkers ask it (``_recall_figures.py``): whether the context holds the answer (LoCoMo
  as ``context_check.py``: answer token recall; PrefEval as ``prefeval_check.py``: recall holds the
  preference; BEAM, with no gold answers: its evidence messages among recall's hits), the figure
  chosen on, and beside it the evidence among recall's hits (shown only: recall leaves out a hit
  the persona already holds, so a persona that holds the preference lowers it).

- ``recall_diversify`` (``facade.core.RECALL_DIVERSIFY``: whether recall's search leaves out an
  atom or message whose finding a better hit already stands for) changes what recall injects; a
  value costs nothing but the questions asked of recall, as for ``preferences_share``.

For each conversation held out, the value with the best mean (search: of R@10 and R@1000tok;
recall: of whether it holds the answer) over the three sets (each set's questions of the other
conversations, each set weighing the same) is chosen among the values that keep every set at
least at today's figure on those conversations, and measured on the held-out conversation. Prints each value's figures per set, the held-out choice's, and how
often each value was chosen (the spread).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from collections.abc import Callable, Sequence
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
    spread_by_set,
    trained,
)
from _recall_figures import FIGURES, recalled

Value = int | float
# constant -> (today's value, the grid)
GRIDS: dict[str, tuple[Value, tuple[Value, ...]]] = {
    "previous_turn": (500, (0, 150, 300, 500, 800, 1200, 2000)),
    "small_talk_words": (4, (2, 3, 4, 5, 6)),
    "material_chars": (600, (300, 600, 900, 1500, 2500, 4000, 20000)),
    "preferences_share": (1.0, (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)),
    "recall_diversify": (1, (0, 1)),
}
RECALLED = {"preferences_share", "recall_diversify"}  # constants judged by what recall injects, not by search


def apply_previous_turn(data_dir: Path, value: Value) -> None:
    """Rewrite the copy's keyword texts with ``CONTEXT_FOR_CHARS = value``."""
    from memstrata import Memory
    from memstrata.retrieval import documents
    from memstrata.retrieval.reindex import rewrite_keyword_texts

    documents.CONTEXT_FOR_CHARS = int(value)
    with Memory.open(data_dir) as mem:
        rewrite_keyword_texts(mem._async._store, with_previous=True)


def extracted_with(module: str, name: str) -> Callable[[Path, Value], None]:
    """Run the pipeline (L1, L2, L3 and the atoms' vectors) on the copy of an import made without
    it, with ``module.name = value``."""

    def apply(data_dir: Path, value: Value) -> None:
        import importlib

        from memstrata import Memory

        setattr(importlib.import_module(module), name, value)
        with Memory.open(data_dir) as mem:
            report = mem.run_all()
        if not report.ok:
            raise SystemExit(f"the pipeline failed on {data_dir} with {name}={value}: {report}")

    return apply


def apply_preferences_share(data_dir: Path, value: Value) -> None:
    """Rewrite every tenant's persona on the copy (L3, forced) with ``PREFERENCES_SHARE = value``."""
    from memstrata import Memory
    from memstrata.engines.offline.l3 import writer

    writer.PREFERENCES_SHARE = float(value)
    with Memory.open(data_dir) as mem:
        core = mem._async
        upper = core._pipeline.tenants
        assert upper is not None, "the offline engine has its upper layers"
        for tenant in core._store.tenants():
            if mem._portal.call(upper.run_l3(tenant, force=True)) is None:
                raise SystemExit(f"the persona of {tenant} was not rewritten on {data_dir}")


def apply_recall_diversify(data_dir: Path, value: Value) -> None:
    """Recall's search diversified (1) or not (0): ``facade.core.RECALL_DIVERSIFY``; the copy is
    not changed."""
    from memstrata.facade import core

    core.RECALL_DIVERSIFY = bool(value)


APPLY: dict[str, Callable[[Path, Value], None]] = {
    "previous_turn": apply_previous_turn,
    "small_talk_words": extracted_with("memstrata.engines.offline.l1.classify", "SMALL_TALK_WORDS"),
    "material_chars": extracted_with("memstrata.engines.offline.l1.extract", "MATERIAL_CHARS"),
    "preferences_share": apply_preferences_share,
    "recall_diversify": apply_recall_diversify,
}


def searched(data_dir: Path, questions: Sequence[Question]) -> list[tuple[float, float]]:
    """Per question: R@10 and R@1000tok as its checker searches (limit 50; PrefEval's top 10 from
    ``search(limit=10)``, as ``prefeval_check.py`` asks: fewer candidates are judged, and with many
    atoms its top 10 differs from a limit-50 search's)."""
    from memstrata import Memory

    def found(hits: Sequence[Any]) -> list[tuple[frozenset[str], int]]:
        return [
            (frozenset(str(i) for i in (h.source_message_ids or ())), ntokens(str(h.content))) for h in hits
        ]

    out = []
    with Memory.open(data_dir, read_only=True) as mem:
        for q in questions:
            got = measure(q, found(mem.search(q.text, user_id=q.group, limit=50)))
            if q.dataset == "prefeval":
                got = (measure(q, found(mem.search(q.text, user_id=q.group, limit=10)))[0], got[1])
            out.append(got)
    return out


def figures(
    constant: str, value: Value, sets: dict[str, tuple[Path, list[Question]]], work: Path
) -> list[tuple[float, float]]:
    """Per question of every set, in order, its two figures with ``constant`` at ``value``: (R@10,
    R@1000tok) of search, or what recall holds (``recall.FIGURES``)."""
    kept = work / f"{constant}-{value}.json"
    if kept.exists():
        return [(float(r), float(t)) for r, t in json.loads(kept.read_text())]
    out: list[tuple[float, float]] = []
    for name, (source, qs) in sets.items():
        copy = work / f"{name}-{constant}-{value}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(source, copy)
        try:
            APPLY[constant](copy, value)
            out += recalled(copy, qs) if constant in RECALLED else searched(copy, qs)
        finally:
            shutil.rmtree(copy, ignore_errors=True)
        print(f"{constant}={value}: {name} done", flush=True)
    kept.write_text(json.dumps(out))
    return out


def choose(
    questions: Sequence[Question],
    grid: Sequence[Value],
    figure: np.ndarray,
    today: Value,
    *,
    floor: bool = True,
) -> dict[str, Value]:
    """The held-out choice per conversation (``fusion_loo``'s rule: no set below today's figure;
    without ``floor``, the best mean over the sets whatever one set loses)."""
    sets_of, at = set_masks(questions), grid.index(today)

    def pick(keep: np.ndarray) -> Value:
        rest = [figure[:, m].mean(axis=1) for m in trained(sets_of, keep)]
        if not rest:  # nothing else to choose on (one conversation in all)
            return today
        per_set = np.stack(rest, axis=1)
        allowed = (per_set >= per_set[at] - 1e-9).all(axis=1) | (not floor)
        score = np.where(allowed, per_set.mean(axis=1), -1.0)
        # ties go to today's value, then to the grid's order
        ties = [i for i in range(len(grid)) if score[i] >= score.max() - 1e-12]
        return today if at in ties else grid[ties[0]]

    return leave_one_out(questions, pick)


def report(
    constant: str,
    questions: Sequence[Question],
    grid: Sequence[Value],
    raw: dict[Value, list[tuple[float, float]]],
    chosen: dict[str, Value],
) -> None:
    label = " / ".join(FIGURES) if constant in RECALLED else f"R@10 / R@{BUDGET}tok"
    held = held_out(questions, raw, chosen)
    for name in dict.fromkeys(q.dataset for q in questions):
        idx = [i for i, q in enumerate(questions) if q.dataset == name]
        cells = [
            f"{v}: {100 * statistics.mean(raw[v][i][0] for i in idx):.1f} / "
            f"{100 * statistics.mean(raw[v][i][1] for i in idx):.1f}"
            for v in grid
        ]
        mine = [h for h in (held[i] for i in idx) if h is not None]
        print(
            f"{name} (n={len(idx)}) {label} per value: "
            + "; ".join(cells)
            + f"; held-out choice {100 * statistics.mean(h[0] for h in mine):.1f} / "
            f"{100 * statistics.mean(h[1] for h in mine):.1f}"
        )
    print(f"{constant}: chosen in {len(chosen)} folds: {spread(chosen.values())}")
    for line in spread_by_set(questions, chosen):
        print(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in LOADERS:
        ap.add_argument(f"--{name}", type=Path)
    ap.add_argument("--work", type=Path, required=True, help="copies and kept figures go here")
    ap.add_argument("--constant", choices=sorted(GRIDS), default="previous_turn")
    ap.add_argument("--limit", type=int, default=0, help="questions per set (0: all)")
    ap.add_argument("--best-mean", action="store_true", help="also choose by the best mean alone")
    ap.add_argument("--only", type=float, help="compute this value's figures, keep them and stop")
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    a.work.mkdir(parents=True, exist_ok=True)
    sets: dict[str, tuple[Path, list[Question]]] = {}
    for name, load in LOADERS.items():
        where = getattr(a, name)
        if where is not None:
            qs = load()
            sets[name] = (where, qs[: a.limit] if a.limit else qs)
    if not sets:
        ap.error("give at least one of --locomo, --beam, --prefeval")
    questions = [q for _, qs in sets.values() for q in qs]
    today, grid = GRIDS[a.constant]
    if a.only is not None:  # one value per run keeps each run short; the last run reads them all
        figures(a.constant, type(today)(a.only), sets, a.work)
        return 0
    raw = {v: figures(a.constant, v, sets, a.work) for v in grid}
    # search: the mean of R@10 and R@1000tok; recall: whether it holds the answer (a hit's
    # evidence already in the persona is left out of recall's hits: that figure is shown only)
    both = a.constant not in RECALLED
    figure = np.array([[(f[0] + f[1]) / 2 if both else f[0] for f in raw[v]] for v in grid])
    report(a.constant, questions, grid, raw, choose(questions, grid, figure, today))
    if a.best_mean:
        print("without the rule that no set falls below today's figure (the best mean over the sets):")
        report(a.constant, questions, grid, raw, choose(questions, grid, figure, today, floor=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
