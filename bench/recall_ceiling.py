"""How much of the gold answers recall's context could hold at all: the judge's measure over what
recall shows, over everything search found, and over the annotated evidence itself, one run.

    python bench/recall_ceiling.py --data-dir DIR [--limit N]

DIR holds the LoCoMo dev set already imported (as for bench/recall_budget.py). For every question of
categories 1-4, the judge's answer token recall (../shared/eval/context_check.py: the share of the
gold answer's content words found in a text) over:

  context            recall()'s system_context + prepend_context, default settings (what the judge scores)
  context + top 50   the context plus the text of the 50 top search hits (L1 + L0, as the judge's
                     locomo_check searches): what any selection from the retrieved memories could show
  evidence           the question's annotated evidence turns (each with its session date, as the
                     judge's raw-turn baseline writes them) plus every atom made from them
  evidence, raw      the evidence turns alone

and, for the questions whose top 50 hits add answer words to the context, the rank of the first hit
that does (what is lost is ranked below what fits, or is not there at all).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dev_set import CATS, answer_recall, arguments, gold_answers, load, pct, tokens
from memstrata import Memory

MEASURES = ("context", "context + top 50", "evidence", "evidence, raw")


def main() -> int:
    a = arguments(__doc__)
    gold = gold_answers(a.data)
    scores: dict[str, dict[int, list[float]]] = {m: {c: [] for c in CATS} for m in MEASURES}
    first_adding: Counter[int] = Counter()
    with Memory.open(a.data_dir) as mem:
        for sid, _, _, turns, questions in load(str(a.data)):
            said = {t.dia_id: f"[{t.date}] {t.speaker}: {t.text}" for t in turns}
            made_from: dict[str, list[str]] = {}
            for atom in mem.atoms(user_id=sid, limit=1_000_000):
                for source in atom.source_message_ids:
                    made_from.setdefault(source, []).append(atom.content)
            for q in questions[: a.limit]:
                answer = gold.get((sid, q.question))
                if answer is None:
                    continue
                r = mem.recall(q.question, session_key=f"bench-{sid}", user_id=sid)
                context = f"{r.system_context}\n{r.prepend_context}"
                hits = mem.search(q.question, user_id=sid, limit=50, layers=("L1", "L0"))
                raw = " ".join(said[d] for d in q.evidence if d in said)
                atoms = " ".join(c for d in q.evidence for c in made_from.get(f"{sid}/{d}", []))
                texts = {
                    "context": context,
                    "context + top 50": " ".join([context, *(h.content for h in hits)]),
                    "evidence": f"{raw} {atoms}",
                    "evidence, raw": raw,
                }
                for measure, text in texts.items():
                    scores[measure][q.category].append(answer_recall(answer, text))
                missing = set(tokens(answer)) - set(tokens(context))
                rank = next((i for i, h in enumerate(hits) if missing & set(tokens(h.content))), None)
                if rank is not None:
                    first_adding[rank // 10 * 10] += 1
        mem.close(flush=False)
    for measure in MEASURES:
        by_cat = scores[measure]
        every = [x for v in by_cat.values() for x in v]
        cats = {CATS[c]: pct(v) for c, v in by_cat.items()}
        print(f"recall_ceiling: {measure:17s} answer token recall {pct(every):5.1f}%  {cats}")
    ranks = ", ".join(f"{k}-{k + 9}: {first_adding[k]}" for k in sorted(first_adding))
    print(f"recall_ceiling: first top-50 hit adding answer words, by rank: {ranks}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
