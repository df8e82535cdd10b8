"""Recall's own constants chosen leave-one-conversation-out across the three dev sets at once, by
what recall injects (``bench/constants_loo.py`` and ``fusion_loo.py`` choose search's by what
search finds).

    python bench/recall_loo.py --locomo DIR --beam DIR --prefeval DIR [--limit N]

Each DIR is a dev set imported by its checker in ../shared/eval (``--data-dir DIR``; opened read
only). For each value of the constant (``facade.core.RECALL_DIVERSIFY``: whether recall's search
leaves out an atom or message whose finding a better hit already stands for), every question is
recalled (``Memory.recall``, default settings) and scored by what its context holds:

  LoCoMo    the share of the gold answer's content words in ``system_context + prepend_context``
            (../shared/eval/context_check.py's measure)
  BEAM      the share of the question's evidence messages among the recall hits' sources
  PrefEval  whether the context holds the preference (../shared/eval/prefeval_check.py's measure)

For each conversation held out (a LoCoMo sample, a BEAM chat, a PrefEval tenant), the value with
the best mean over the three sets (each set's questions of the other conversations, each set
weighing the same) is chosen (today's value on a tie) and scored on the held-out conversation.
Prints each value's figures per set, the held-out choice's, and how often each value was chosen.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

SHARED = next(
    (p / "shared" for p in Path(__file__).resolve().parents if (p / "shared" / "eval").is_dir()),
    Path(__file__).resolve().parents[2] / "shared",
)
sys.path.insert(0, str(SHARED / "eval"))

VALUES = (True, False)  # RECALL_DIVERSIFY; the first is the value before it was chosen here
TODAY = True


@dataclass(frozen=True)
class Asked:
    group: str  # the conversation (tenant) it belongs to: recall's user_id
    text: str
    score: Callable[[str, frozenset[str]], float]  # (context, the recall hits' sources) -> score


def locomo() -> list[Asked]:
    from context_check import answer_recall  # type: ignore[import-not-found]
    from locomo_common import load  # type: ignore[import-not-found]

    data = SHARED / "data" / "locomo" / "locomo-dev.json"
    gold = {
        (s["sample_id"], q["question"]): str(q["answer"])
        for s in json.loads(data.read_text())
        for q in s["qa"]
        if "answer" in q
    }
    out = []
    for sid, _, _, _, qs in load(str(data)):
        for q in qs:
            if (answer := gold.get((sid, q.question))) is not None:
                out.append(Asked(sid, q.question, partial(_answer_words, answer_recall, answer)))
    return out


def beam() -> list[Asked]:
    qs = json.loads((SHARED / "data" / "beam" / "questions-dev.json").read_text())

    def covered(evidence: frozenset[str]) -> Callable[[str, frozenset[str]], float]:
        return lambda _, got: len(evidence & got) / max(1, len(evidence))

    return [
        Asked(q["user"], q["question"], covered(frozenset(f"{q['user']}/{e}" for e in q["evidence"])))
        for q in qs
    ]


def prefeval() -> list[Asked]:
    from prefeval_check import build, held  # type: ignore[import-not-found]

    src = SHARED / "data" / "prefeval"
    _, qs = build(
        json.loads((src / "explicit.json").read_text()), json.loads((src / "filler.json").read_text())
    )
    return [Asked(q["user"], q["question"], partial(_held, held, q)) for q in qs]


def _answer_words(measure: Callable[[str, str], float], answer: str, ctx: str, _: frozenset[str]) -> float:
    return float(measure(answer, ctx))


def _held(measure: Callable[[Any, str], bool], q: Any, ctx: str, _: frozenset[str]) -> float:
    return float(measure(q, ctx))


SETS: dict[str, Callable[[], list[Asked]]] = {"locomo": locomo, "beam": beam, "prefeval": prefeval}


def recalled(data_dir: Path, asked: list[Asked], value: bool) -> list[float]:
    from memstrata import Memory
    from memstrata.facade import core

    core.RECALL_DIVERSIFY = value
    out = []
    with Memory.open(data_dir, read_only=True) as mem:
        for q in asked:
            r = mem.recall(q.text, user_id=q.group)
            got = frozenset(str(i) for h in r.hits for i in h.source_message_ids)
            out.append(q.score(f"{r.system_context}\n{r.prepend_context}", got))
    return out


def _pct(xs: list[float]) -> float:
    return 100 * statistics.fmean(xs) if xs else 0.0


def _mean_without(
    asked: dict[str, list[Asked]], scores: dict[str, list[float]], out: tuple[str, str]
) -> float:
    """The mean over the sets of each set's figure without the conversation ``out``."""
    return statistics.fmean(
        _pct([s for q, s in zip(asked[n], scores[n], strict=True) if (n, q.group) != out]) for n in SETS
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in SETS:
        ap.add_argument(f"--{name}", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=0, help="questions per set (0: all)")
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    asked = {name: load()[: a.limit or None] for name, load in SETS.items()}
    scores = {v: {name: recalled(getattr(a, name), asked[name], v) for name in SETS} for v in VALUES}
    pct = _pct
    for v in VALUES:
        print(f"recall_loo: diversify={v!s:5s} " + "  ".join(f"{n} {pct(scores[v][n]):5.1f}" for n in SETS))
    held: dict[str, list[float]] = {n: [] for n in SETS}
    chosen: Counter[bool] = Counter()
    by_fold: dict[tuple[str, str], bool] = {}
    for out_set, out_group in sorted({(n, q.group) for n in SETS for q in asked[n]}):
        out = (out_set, out_group)
        best = max(VALUES, key=lambda v: (round(_mean_without(asked, scores[v], out), 9), v == TODAY))
        chosen[best] += 1
        by_fold[out] = best
        held[out_set] += [
            s for q, s in zip(asked[out_set], scores[best][out_set], strict=True) if q.group == out_group
        ]
    print("recall_loo: held out " + "  ".join(f"{n} {pct(held[n]):5.1f}" for n in SETS))
    print(f"recall_loo: folds choosing each value: {dict(chosen)} of {sum(chosen.values())}")
    common = chosen.most_common(1)[0][0] if chosen else None
    print(
        "recall_loo: the other folds: "
        + ", ".join(f"{g} ({n}) {v}" for (n, g), v in by_fold.items() if v != common)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
