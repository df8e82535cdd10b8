"""How recall's one character budget is best shared: answer token recall of a few splits, one run.

    python bench/recall_budget.py --data-dir DIR [--limit N]

DIR holds the LoCoMo dev set already imported (`memstrata --data-dir DIR import
../shared/data/locomo/locomo-dev.json --format locomo`, or the folder context_check.py used). For each
split below, every question of categories 1-4 is recalled (`Memory.recall`, as the judge does) and
scored with the judge's own measure (../shared/eval/context_check.py: the share of the gold answer's
content words found in `system_context + prepend_context`). The persona share can only show what
the stored persona holds: its body was written within `persona.max_chars` at import. Prints one line
per split; the defaults in settings.py are the best of these (docs/benchmarks.md).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dev_set import CATS, answer_recall, arguments, gold_answers, load, pct
from memstrata import Memory

SPLITS: list[tuple[str, dict[str, Any]]] = [
    ("defaults", {}),
    ("no persona", {"persona_chars": 0}),
    ("persona 700", {"persona_chars": 700}),
    ("persona 1500", {"persona_chars": 1500}),
    ("no navigation", {"navigation_chars": 0}),
    ("navigation 600", {"navigation_chars": 600}),
    ("scene excerpt 600", {"excerpt_chars": 600}),
    ("lines of 200", {"line_chars": 200}),
    ("lines of 400", {"line_chars": 400}),
    ("60 candidates", {"candidates": 60}),
]


def measure(
    home: Path, data: Path, recall: dict[str, Any], limit: int
) -> tuple[float, dict[str, float], float]:
    gold = gold_answers(data)
    scores: list[float] = []
    by_cat: dict[int, list[float]] = {c: [] for c in CATS}
    sizes: list[int] = []
    with Memory.open(home, recall=recall) as mem:
        for sid, _, _, _, questions in load(str(data)):
            for q in questions[:limit]:
                answer = gold.get((sid, q.question))
                if answer is None:
                    continue
                r = mem.recall(q.question, session_key=f"bench-{sid}", user_id=sid)
                context = f"{r.system_context}\n{r.prepend_context}"
                x = answer_recall(answer, context)
                scores.append(x)
                by_cat[q.category].append(x)
                sizes.append(len(context))
        mem.close(flush=False)
    return pct(scores), {CATS[c]: pct(v) for c, v in by_cat.items()}, statistics.median(sizes)


def main() -> int:
    a = arguments(__doc__)
    for name, recall in SPLITS:
        total, cats, median = measure(a.data_dir, a.data, recall, a.limit)
        print(
            f"recall_budget: {name:18s} answer token recall {total:5.1f}%  {cats}  context median {median:.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
