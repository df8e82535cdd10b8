"""What ``recall`` gives an agent for a dev-set question, scored as the checkers in ../shared/eval
score it (for ``constants_loo.py``'s constants that change what recall injects, not what search
finds). Two figures per question:

- whether the context (``system_context`` + ``prepend_context``) holds the answer: LoCoMo as
  ``context_check.py`` (the gold answer's content words found, recall called with the checker's
  session key), PrefEval as ``prefeval_check.py`` (at least half of the preference's words that
  are not in the question); BEAM has no gold answers: its evidence, as below;
- the evidence among recall's hits (their source message ids): LoCoMo's evidence turns, BEAM's
  evidence messages (both: their share), PrefEval's preference message (found or not)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from _folds import Question

FIGURES = ("recall holds", "evidence in recall's hits")


def holds(q: Question, context: str, sources: set[str]) -> tuple[float, float]:
    """The two figures of one recall: ``context`` its text, ``sources`` its hits' message ids."""
    from context_check import answer_recall  # type: ignore[import-not-found]
    from prefeval_check import held  # type: ignore[import-not-found]

    evidence = len(q.evidence & sources) / len(q.evidence)
    if q.dataset == "locomo":
        return answer_recall(q.answer, context), evidence
    if q.dataset == "prefeval":
        return float(held({"preference": q.answer, "question": q.text}, context)), evidence
    return evidence, evidence


def recalled(data_dir: Path, questions: Sequence[Question]) -> list[tuple[float, float]]:
    """Per question: ``recall`` asked as its checker asks it, and its two figures."""
    from memstrata import Memory

    out = []
    with Memory.open(data_dir) as mem:
        for q in questions:
            key = f"check-{q.group}" if q.dataset == "locomo" else None
            r = mem.recall(q.text, session_key=key, user_id=q.group)
            context = f"{r.system_context or ''}\n{r.prepend_context or ''}"
            sources = {str(i) for h in r.hits for i in (h.source_message_ids or ())}
            out.append(holds(q, context, sources))
    return out
