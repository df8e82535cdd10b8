"""Whether evidence found by fewer lists gets its fair place under findings fusion (issue 49): a
user message and the atoms drawn from it share their best places in every list
(``fusion.finding_rrf``), but a message with no atom (most assistant replies) is in the messages'
two lists only, so it collects fewer places. Each variant below is replayed from the lists
``bench/fusion_loo.py`` saved (``--cache``; the replay reproduces the checkers' figures but for
the standing floor, which it leaves out), on the three dev sets at once, and each family's
constant is chosen leave-one-conversation-out by fusion_loo's rule (``choose``: no set below
today's figure on the other conversations, less ``--slack`` points; the value 0 / off is today's).

    python bench/fair_place.py --cache FILE --locomo D --beam D --prefeval D [--slack 0.1]

D: the data directories the cache was read from (their SQLite stores tell which messages have
atoms and which turn each one follows). Families:

- ``cross``: a finding's places in the lists of its other layer count ``cross`` times (1: today;
  0: each kind of list counts its best layer once, so every finding has at most one place a kind);
- ``impute``: a message with no atom takes, in the atoms' list of each kind, its own place in the
  messages' list of that kind, counted ``impute`` times (the lists it cannot be in, filled);
- ``impute_vector``: the same in the atoms' vector list only;
- ``impute_first``: ``impute_vector`` 1 for a message in the first ``impute_first`` places of the
  messages' vector list only;
- ``bonus``: a finding's best single place counts ``1 + bonus`` times (the top of any one list);
- ``inherit``: an assistant reply with no atom takes ``inherit`` times the places of the turn it
  answers (what a reply is findable by: the request it answers);
- ``relative``: a hit is kept only when its relevance reaches ``relative`` times the best judged
  before it (the weak hits after a strong one; "Where does Maya work?").

Prints each variant's figures (R@10 / R@1000tok per set), each family's fold choices and held-out
figures, and two ceilings on BEAM: the better of fusion and the messages' vector list (dense over
raw messages) question by question, and the evidence any list holds in its first 10 (capped at 10
a question).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fusion_loo as fl
from _folds import Question, leave_one_out, measure, spread

TODAY: fl.Point = (5, 0.9, 2.0, 5.0, 200, 1, 1, 1.0)  # the shipped constants (fusion, legs)
FAMILIES: dict[str, tuple[float, ...]] = {
    "cross": (0.0, 0.5, 0.75),
    "impute": (0.5, 1.0),
    "impute_vector": (0.5, 1.0),
    "impute_first": (3.0, 5.0, 10.0),
    "bonus": (0.25, 0.5, 1.0),
    "inherit": (0.25, 0.5),
    "relative": (0.2, 0.3, 0.4),
}


class Turns:
    """Per message id: its role, whether an atom cites it, and the message before it in its session."""

    def __init__(self, dirs: Sequence[Path]) -> None:
        self.role: dict[str, str] = {}
        self.cited: set[str] = set()
        self.before: dict[str, str] = {}
        for d in dirs:
            db = sqlite3.connect(f"file:{d / 'memstrata.db'}?mode=ro", uri=True)
            for (ids,) in db.execute("SELECT source_message_ids FROM atoms WHERE superseded_by IS NULL"):
                self.cited.update(json.loads(ids))
            last: dict[tuple[str, str, str], str] = {}
            for mid, user, agent, session, role in db.execute(
                "SELECT id, user_id, agent_id, session_key, role FROM messages ORDER BY seq"
            ):
                self.role[mid] = role
                if (user, agent, session) in last:
                    self.before[mid] = last[(user, agent, session)]
                last[(user, agent, session)] = mid
            db.close()


def fused(lg: dict[str, Any], turns: Turns, family: str, value: float) -> list[tuple[Any, float]]:
    """``finding_rrf`` at today's constants, with ``family`` at ``value`` (0: today's)."""
    from memstrata.retrieval.fusion import source_places
    from memstrata.retrieval.legs import Legs

    legs = Legs(None, None, None, [], "hybrid", lg["kinds"], lg["lists"], lg["cosines"], lg["layers"])  # type: ignore[arg-type]
    top, full, power, k, depth, _, instructions, instruction_full = TODAY
    weights = legs.weights(
        1.0, top, full, power, instruction_top=instructions, instruction_full=instruction_full
    )
    lists = [found[:depth] for found in legs.lists]
    sources = {key: got[0] for key, got in lg["info"].items()}
    best = source_places(lists, sources)
    own_layer = {
        kind: i
        for i, (kind, layer) in enumerate(zip(legs.kinds, legs.layers, strict=True))
        if layer.value == "L0"
    }
    scores: dict[Any, tuple[float, float]] = {}
    for key, alone in _rrf(lists, k, weights):
        named = sources.get(key, frozenset())
        if len(named) != 1:
            scores[key] = (alone, alone)
            continue
        (source,) = named
        atomless = key[0].value == "L0" and source not in turns.cited
        answered = turns.before.get(source) if atomless and turns.role.get(source) == "assistant" else None
        per_kind: dict[str, list[float]] = {}
        for i, (first, w) in enumerate(zip(best, weights, strict=True)):
            kind = legs.kinds[i]
            got = w / (k + first[source]) if source in first else 0.0
            if family == "inherit" and answered is not None and answered in first:
                got = max(got, value * w / (k + first[answered]))
            imputing = family == "impute" or (family.startswith("impute_") and kind == "vector")
            place = best[own_layer[kind]].get(source) if kind in own_layer else None
            if not got and imputing and atomless and place is not None:
                if family != "impute_first":
                    got = value * w / (k + place)
                elif place <= value:
                    got = w / (k + place)
            if got:
                per_kind.setdefault(kind, []).append(got)
        total = 0.0
        for got_of_kind in per_kind.values():
            ordered = sorted(got_of_kind, reverse=True)
            total += ordered[0] + (value if family == "cross" else 1.0) * sum(ordered[1:])
        if family == "bonus":
            total += value * max((g for got_of_kind in per_kind.values() for g in got_of_kind), default=0.0)
        scores[key] = (total, alone)
    return [(key, s[0]) for key, s in sorted(scores.items(), key=lambda kv: kv[1], reverse=True)]


def _rrf(lists: Sequence[Sequence[Any]], k: float, weights: Sequence[float]) -> list[tuple[Any, float]]:
    from memstrata.retrieval.fusion import rrf

    return rrf(lists, k, weights)


def kept(
    lg: dict[str, Any], order: Sequence[tuple[Any, float]], relative: float
) -> list[tuple[frozenset[str], int]]:
    """What search returns from ``order`` (as ``fusion_loo.fused_hits``), with the relative floor."""
    out: list[tuple[frozenset[str], int]] = []
    covered: set[str] = set()
    floor_met, strongest = False, 0.0
    for key, _ in order[: 2 * 50]:
        if key not in lg["info"]:
            continue
        relevance = lg["relevance"].get(key, 0.0)
        strongest = max(strongest, relevance)
        floor_met = floor_met or relevance >= fl.FLOOR.query_floor
        sources, size = lg["info"][key]
        if relevance >= max(fl.FLOOR.min_score, relative * strongest) and len(out) < 50:
            if not (sources and sources <= covered):
                out.append((sources, size))
            covered |= sources
        if floor_met and len(out) >= 50:
            break
    return out if floor_met else []


def figure_of(
    questions: Sequence[Question], legs: Sequence[dict[str, Any]], turns: Turns, family: str, value: float
) -> Any:
    if family == "relative":
        got = [
            measure(q, kept(lg, fused(lg, turns, "", 0.0), value))
            for q, lg in zip(questions, legs, strict=True)
        ]
    else:
        got = [
            measure(q, kept(lg, fused(lg, turns, family, value), 0.0))
            for q, lg in zip(questions, legs, strict=True)
        ]
    return np.array(got)


def ceilings(questions: Sequence[Question], legs: Sequence[dict[str, Any]], today: Any) -> str:
    """BEAM R@10: the better of today and the messages' vector list, question by question; the
    evidence in any list's first 10."""
    better, held = [], []
    for j, (q, lg) in enumerate(zip(questions, legs, strict=True)):
        if q.dataset != "beam":
            continue
        messages = next(
            found
            for kind, layer, found in zip(lg["kinds"], lg["layers"], lg["lists"], strict=True)
            if kind == "vector" and layer.value == "L0"
        )
        dense = measure(q, [lg["info"][key] for key in messages if key in lg["info"]])[0]
        better.append(max(today[j, 0], dense))
        pool = set().union(
            *[lg["info"][key][0] for found in lg["lists"] for key in found[:10] if key in lg["info"]]
        )
        held.append(min(len(q.evidence & pool), 10) / len(q.evidence))
    return f"BEAM R@10 ceilings: better of fusion and dense by question {100 * np.mean(better):.1f}; evidence in any list's first 10 {100 * np.mean(held):.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, required=True, help="fusion_loo.py's --cache of the three sets")
    for name in ("locomo", "beam", "prefeval"):
        ap.add_argument(f"--{name}", type=Path, required=True)
    ap.add_argument("--slack", type=float, default=0.1)
    a = ap.parse_args()
    import __main__

    __main__.Question = Question  # the cache pickled it from fusion_loo's __main__
    questions, legs = pickle.loads(a.cache.read_bytes())
    turns = Turns([a.locomo, a.beam, a.prefeval])
    pairs = list(zip(questions, legs, strict=True))
    alone = np.array(
        [
            [measure(q, fl.fused_hits(lg, TODAY, only=kind)) for q, lg in pairs]
            for kind in ("keyword", "vector")
        ]
    )
    today = figure_of(questions, legs, turns, "", 0.0)
    names = list(dict.fromkeys(q.dataset for q in questions))
    sets_of = [np.array([q.dataset == n for q in questions]) for n in names]

    def show(got: Any) -> str:
        return "  ".join(
            f"{n} {100 * got[m, 0].mean():.1f}/{100 * got[m, 1].mean():.1f}"
            for n, m in zip(names, sets_of, strict=True)
        )

    print(f"today: {show(today)}", flush=True)
    print(ceilings(questions, legs, today), flush=True)
    for family, values in FAMILIES.items():
        grid = [today] + [figure_of(questions, legs, turns, family, v) for v in values]
        for v, got in zip(values, grid[1:], strict=True):
            print(f"{family} {v}: {show(got)}", flush=True)
        report(family, (0.0, *values), np.stack(grid), alone, questions, sets_of, show, a.slack)
    return 0


def report(
    family: str,
    values: Sequence[float],
    figure: Any,
    alone: Any,
    questions: Sequence[Question],
    sets_of: Sequence[Any],
    show: Callable[[Any], str],
    slack: float,
) -> None:
    chosen = leave_one_out(questions, lambda keep: fl.choose(figure, alone, sets_of, keep, 0, slack / 100))
    held = np.array([figure[chosen[q.group], j] for j, q in enumerate(questions)])
    folds = spread(values[i] for i in chosen.values())
    print(f"{family}: chosen in {len(chosen)} folds: {folds}; held out {show(held)}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
