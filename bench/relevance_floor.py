"""The relevance floor (``search.query_floor`` and ``search.min_score``), chosen
leave-one-conversation-out on the LoCoMo dev set.

    python bench/relevance_floor.py --data-dir DIR [--data LOCOMO.json] [--eval-dir DIR]

DIR is an imported dev set (``memstrata --data-dir DIR import locomo-dev.json --format locomo``).
Every question of categories 1-4 is searched once with no floor (``min_score=0``, ``limit=50``,
layers L1+L0, as the judge's script searches), and so is every query of ``OFF_TOPIC`` (questions
about nothing any of the conversations talks about) on every conversation. A floor then keeps the
hits of a question when its best hit reaches the query floor, those scoring at least ``min_score``.

For each conversation held out, both parts are chosen on the other four: the query floor is the
lowest at which no off-topic query finds anything there; ``min_score`` the highest (at most the
query floor) at which no question there loses evidence within its first 1,000 tokens. They are
then measured on the held-out one: evidence R@10 and R@1000tok against no floor, and the
off-topic queries that still find something. Prints one line per fold and the spread, then the
figures of the defaults (the settings') and of one floor for both parts on all five, and R@10 of
the same hits in the order fusion ranked them (``Hit.rank``), for comparison.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

# Nothing in the five dev conversations (daily life, family, hobbies, work, travel) is about these.
OFF_TOPIC = (
    "What is the boiling point of mercury in kelvin?",
    "How do I configure TLS on a Kubernetes ingress controller?",
    "Explain the proof of Fermat's last theorem",
    "What is the derivative of the arctangent function?",
    "What is the airspeed velocity of an unladen swallow?",
    "Which compiler flags enable link-time optimisation in GCC?",
    "What is the capital of Burkina Faso?",
    "quantum chromodynamics gauge symmetry",
    "How many moons does Neptune have?",
    "Convert 30 degrees Celsius to Fahrenheit",
    "What does the HTTP status code 418 mean?",
    "Who won the 1954 football world cup?",
)
FLOORS = [round(i / 100, 2) for i in range(100)]


@dataclass(frozen=True, slots=True)
class Found:
    score: float
    rank: int
    text: str
    ids: frozenset[str]


def search_all(data_dir: Path, samples: Sequence[Any]) -> tuple[dict[str, list[Any]], dict[str, list[float]]]:
    """Per conversation: ``(question, hits)`` of every question, and each off-topic query's best score."""
    from memstrata import Memory

    asked: dict[str, list[Any]] = {}
    off: dict[str, list[float]] = {}
    with Memory.open(str(data_dir), read_only=True) as mem:
        for sid, _, _, _, qs in samples:
            asked[sid] = []
            for q in qs:
                hits = mem.search(q.question, user_id=sid, limit=50, layers=("L1", "L0"), min_score=0.0)
                found = [
                    Found(
                        h.score,
                        h.rank,
                        h.content,
                        frozenset(i[len(sid) + 1 :] for i in h.source_message_ids if i.startswith(sid + "/")),
                    )
                    for h in hits
                ]
                asked[sid].append((q, found))
            off[sid] = [
                max((h.score for h in mem.search(t, user_id=sid, limit=10, min_score=0.0)), default=0.0)
                for t in OFF_TOPIC
            ]
    return asked, off


def recall_at(
    score: Any, rows: Sequence[Any], floor: float, *, query_floor: float = 0.0, by_rank: bool = False
) -> dict[str, float]:
    qs, ranked = [], []
    for q, found in rows:
        heard = any(f.score >= query_floor for f in found)
        kept = [f for f in found if f.score >= floor] if heard else []
        if by_rank:
            kept.sort(key=lambda f: f.rank)
        qs.append(q)
        ranked.append([(f.text, set(f.ids)) for f in kept])
    out: dict[str, float] = score(qs, ranked)
    return out


def lowest_quiet_floor(off: dict[str, list[float]], sids: Sequence[str]) -> float:
    """The lowest query floor at which no off-topic query finds anything in these conversations."""
    worst = max(s for sid in sids for s in off[sid])
    return next((f for f in FLOORS if f > worst), 1.0)


def highest_harmless_floor(score: Any, rows: Sequence[Any], query_floor: float) -> float:
    """The highest ``min_score`` up to ``query_floor`` at which no question of ``rows`` loses
    evidence within its first 1,000 tokens (against keeping every hit of a question heard)."""

    def each(floor: float) -> list[float]:
        return [recall_at(score, [r], floor, query_floor=query_floor)["R@1000tok"] for r in rows]

    base, chosen = each(0.0), 0.0
    for floor in (f for f in FLOORS if 0.0 < f <= query_floor):
        if any(got < was for got, was in zip(each(floor), base, strict=True)):
            break
        chosen = floor
    return chosen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", required=True, type=Path)
    ap.add_argument("--eval-dir", type=Path, default=REPO.parent / "shared" / "eval")
    ap.add_argument("--data", type=Path, default=None, help="default: the dev set beside --eval-dir")
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(a.eval_dir))
    from locomo_common import load, score  # type: ignore[import-not-found]

    from memstrata.settings import Settings

    data = a.data or a.eval_dir.parent / "data" / "locomo" / "locomo-dev.json"
    samples = load(str(data))
    asked, off = search_all(a.data_dir, samples)
    sids = list(asked)
    drops, leaks, gates, floors = [], [], [], []
    for held in sids:
        others = [s for s in sids if s != held]
        gate = lowest_quiet_floor(off, others)
        floor = highest_harmless_floor(score, [r for s in others for r in asked[s]], gate)
        base = recall_at(score, asked[held], 0.0)
        cut = recall_at(score, asked[held], floor, query_floor=gate)
        leak = sum(1 for s in off[held] if s >= gate)
        drops.append(base["R@10"] - cut["R@10"])
        leaks.append(leak)
        gates.append(gate)
        floors.append(floor)
        print(
            f"held out {held}: query floor {gate:.2f}, min_score {floor:.2f} (chosen on the other "
            f"four); R@10 {base['R@10']} -> {cut['R@10']}, R@1000tok {base['R@1000tok']} -> "
            f"{cut['R@1000tok']}; off-topic queries finding something: {leak}/{len(OFF_TOPIC)}"
        )
    print(
        f"leave-one-out: query floor {min(gates):.2f}-{max(gates):.2f}, min_score "
        f"{min(floors):.2f}-{max(floors):.2f}, held-out R@10 drop {min(drops):.1f}-{max(drops):.1f} "
        f"points, off-topic leaks {sum(leaks)}/{len(OFF_TOPIC) * len(sids)}"
    )
    rows = [r for sid in sids for r in asked[sid]]
    gate = lowest_quiet_floor(off, sids)
    print(
        f"chosen on all five: query floor {gate:.2f}, min_score {highest_harmless_floor(score, rows, gate):.2f}"
    )
    search = Settings().search
    for label, floor, gate in (
        ("no floor", 0.0, 0.0),
        (
            f"query floor {search.query_floor} + min_score {search.min_score}",
            search.min_score,
            search.query_floor,
        ),
        (f"one floor {search.query_floor} for both", search.query_floor, search.query_floor),
    ):
        got = recall_at(score, rows, floor, query_floor=gate)
        leak = sum(1 for sid in sids for s in off[sid] if s >= max(gate, floor))
        print(
            f"all five, {label}: R@10 {got['R@10']}, R@1000tok {got['R@1000tok']}; "
            f"off-topic leaks {leak}/{len(OFF_TOPIC) * len(sids)}"
        )
    fused = recall_at(score, rows, 0.0, by_rank=True)
    print(f"all five, the same hits in fused order: R@10 {fused['R@10']}, R@1000tok {fused['R@1000tok']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
