"""The standing floor (``search.standing_floor``) chosen leave-one-conversation-out across the three
dev sets at once (LoCoMo, BEAM, PrefEval), with off-topic questions as the bound.

    python bench/standing_floor.py --locomo DIR --beam DIR --prefeval DIR [--cache FILE]

Each DIR is a dev set imported by its checker in ../shared/eval (``--data-dir DIR``), read only.
Every question is searched once as the checkers search (layers L1 + L0, limit 50) with no floor
and every standing atom of a request marked (``standing_floor`` -1); each value of the grid then
applies the default floor as ``chosen`` does, a standing atom a finding when its cosine reaches
the value, and scores evidence R@10 (PrefEval: the preference's message in the top 10) and
R@1000tok as the checkers do. Off-topic questions are asked of every dev tenant and of the
first-impressions and first-person conversations (``bench/first_impressions.py``,
``bench/first_person.py``, imported here): theirs, and the same asked as requests ("Can you tell
me the boiling point of mercury?"), which the floor alone does not tell from PrefEval's by form.

For each conversation held out (a LoCoMo sample, a BEAM chat, a PrefEval tenant), the value with
the best mean of R@10 and R@1000tok over the three sets (each set's questions of the other
conversations, each set weighing the same) is chosen among the values under which no off-topic
question of the other conversations (nor of the two bench conversations) finds what it did not
find with the floor alone; it is then measured on the held-out conversation. Prints each value's
figures per set, how many off-topic questions it lets find something, the share of PrefEval
requests of a topic the tenant stated no preference on that find something (a standing atom of
another topic: what a lower value costs), and how often each value was chosen (the spread).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _folds import (  # a sibling module, not a package
    SHARED,
    Question,
    beam_questions,
    held_out,
    leave_one_out,
    locomo_questions,
    measure,
    ntokens,
    prefeval_questions,
)

GRID = (-1.0, 0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 2.0)  # 2.0: no standing finding (the floor alone)
AS_REQUESTS = (
    "Can you tell me the boiling point of mercury?",
    "Could you tell me who won the 1954 football world cup?",
    "Can you explain the proof of Fermat's last theorem to me?",
    "Can you show me how to configure TLS on a Kubernetes ingress?",
    "Could you summarise the plot of Hamlet for me?",
)
Found = list[
    tuple[frozenset[str], int, float, float | None, bool]
]  # sources, tokens, relevance, cosine, standing


def off_topic() -> tuple[str, ...]:
    import first_impressions
    import first_person

    return tuple(dict.fromkeys((*first_impressions.OFF_TOPIC, *first_person.OFF_TOPIC, *AS_REQUESTS)))


def cross_topic() -> list[Question]:
    """Per PrefEval tenant, one request of each topic it stated no preference on (another
    tenant's question): a standing atom found for it is of another topic."""
    from prefeval_check import build  # type: ignore[import-not-found]

    src = SHARED / "data" / "prefeval"
    _, qs = build(
        json.loads((src / "explicit.json").read_text()), json.loads((src / "filler.json").read_text())
    )
    topics: dict[str, set[str]] = {}
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for q in qs:
        topics.setdefault(q["user"], set()).add(q["topic"])
        by_topic.setdefault(q["topic"], []).append(q)
    out = []
    for user, held in sorted(topics.items()):
        for topic in sorted(set(by_topic) - held):
            q = by_topic[topic][int(user[4:]) % len(by_topic[topic])]
            out.append(Question("cross", user, q["question"], frozenset()))
    return out


def bench_store(home: Path) -> tuple[Path, list[str]]:
    """The first-impressions and first-person conversations imported into ``home``."""
    import first_impressions
    import first_person
    from memstrata import Memory
    from memstrata.interchange import parse_import

    data = first_impressions.seed()
    data["sessions"] += first_person.seed()["sessions"]
    with Memory.open(home) as mem:
        mem.import_sessions(parse_import(data))
    return home, ["maya", "sam", first_person.USER, first_person.NAMED]


def searched(data_dir: Path, questions: Sequence[Question]) -> list[Found]:
    from memstrata import Memory
    from memstrata.models import Layer, Tenant
    from memstrata.operations import arguments
    from memstrata.retrieval.request import SearchRequest

    out = []
    with Memory.open(data_dir, read_only=True) as mem:
        searcher = mem._async._searcher
        plan = arguments.plan("hybrid", mem._async.settings)  # as the checkers' searches are planned
        for q in questions:
            tenant = Tenant(q.group, "default")
            req = SearchRequest(tenant, q.text, (Layer.L1, Layer.L0), 50, plan=plan, standing_floor=-1.0)
            hits = searcher.search(req).hits
            out.append(
                [
                    (
                        frozenset(str(i) for i in (h.source_message_ids or ())),
                        ntokens(str(h.content)),
                        float(h.explain.get("relevance") or 0.0),
                        h.explain.get("cosine"),
                        bool(h.explain.get("standing")),
                    )
                    for h in hits
                ]
            )
    return out


def floored(found: Found, value: float) -> list[tuple[frozenset[str], int]]:
    """What search returns from ``found`` with the default floor and ``standing_floor`` ``value``."""
    from memstrata.settings import SearchSettings

    s = SearchSettings()
    stands = [f[4] and f[3] is not None and f[3] >= value for f in found]
    if not any(f[2] >= s.query_floor or st for f, st in zip(found, stands, strict=True)):
        return []
    return [(f[0], f[1]) for f, st in zip(found, stands, strict=True) if f[2] >= s.min_score or st]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--locomo", required=True)
    ap.add_argument("--beam", required=True)
    ap.add_argument("--prefeval", required=True)
    ap.add_argument("--cache")
    ap.add_argument(
        "--bare",
        action="store_true",
        help="bound by the benches' own off-topic questions only, not as requests",
    )
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sets = {"locomo": (a.locomo, locomo_questions()), "beam": (a.beam, beam_questions())}
    sets["prefeval"] = (a.prefeval, prefeval_questions())
    probes = off_topic()
    cache = Path(a.cache) if a.cache else None
    if cache is not None and cache.exists():
        rows = pickle.loads(cache.read_bytes())
    else:
        rows = []
        for name, (d, qs) in sets.items():
            groups = sorted({q.group for q in qs})
            asked = [*qs, *(Question("off", g, p, frozenset()) for p in probes for g in groups)]
            if name == "prefeval":
                asked += cross_topic()
            rows += list(zip(asked, searched(Path(d), asked), strict=True))
            print(f"{name}: {len(asked)} searched", flush=True)
        with tempfile.TemporaryDirectory(prefix="standing-floor-") as home:
            store, groups = bench_store(Path(home))
            asked = [Question("off", g, p, frozenset()) for p in probes for g in groups]
            rows += list(zip(asked, searched(store, asked), strict=True))
        if cache is not None:
            cache.write_bytes(pickle.dumps(rows))
    score = {
        v: [measure(q, floored(f, v)) if q.dataset not in ("off", "cross") else None for q, f in rows]
        for v in GRID
    }
    finds = {v: [bool(floored(f, v)) for _, f in rows] for v in GRID}
    alone = finds[GRID[-1]]

    def figures(v: float, keep: Sequence[bool]) -> dict[str, tuple[float, float]]:
        out = {}
        for name in sets:
            got = [
                s for (q, _), s, k in zip(rows, score[v], keep, strict=True) if k and q.dataset == name and s
            ]
            n = max(1, len(got))
            out[name] = (100 * sum(r for r, _ in got) / n, 100 * sum(t for _, t in got) / n)
        return out

    def leaks(v: float, keep: Sequence[bool]) -> int:
        return sum(
            1
            for (q, _), f, was, k in zip(rows, finds[v], alone, keep, strict=True)
            if k and q.dataset == "off" and f and not was and not (a.bare and q.text in AS_REQUESTS)
        )

    every = [True] * len(rows)
    cross = [i for i, (q, _) in enumerate(rows) if q.dataset == "cross"]
    for v in GRID:
        fig = figures(v, every)
        shown = ", ".join(f"{n} {r:.1f} / {t:.1f}" for n, (r, t) in fig.items())
        crossed = 100 * sum(finds[v][i] for i in cross) / max(1, len(cross))
        print(
            f"standing_floor {v:5.2f}: {shown}; off-topic newly finding {leaks(v, every)}; cross-topic finding {crossed:.1f}%"
        )
    questions = [q for q, _ in rows]

    def pick(keep: Sequence[bool]) -> float:
        def merit(v: float) -> float:
            fig = figures(v, keep)
            return sum((r + t) / 2 for r, t in fig.values()) / len(fig)

        return max((v for v in GRID if leaks(v, keep) == 0), key=merit)

    chosen = leave_one_out(questions, pick, datasets=sets)
    held = held_out(questions, score, chosen)
    for name in sets:
        got = [s for q, s in zip(questions, held, strict=True) if q.dataset == name and s is not None]
        n = max(1, len(got))
        print(
            f"held out: {name} {100 * sum(r for r, _ in got) / n:.1f} / {100 * sum(t for _, t in got) / n:.1f}"
        )
    counts = sorted(Counter(chosen.values()).items())
    print("spread: " + ", ".join(f"{v} in {c} of {len(chosen)} folds" for v, c in counts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
