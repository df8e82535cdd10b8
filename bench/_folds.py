"""What the leave-one-conversation-out benches share (``constants_loo.py``, ``fusion_loo.py``,
``standing_floor.py``): the three dev sets' questions (LoCoMo, BEAM, PrefEval, as their checkers in
../shared/eval ask them), how a question's hits score as the checkers count (evidence R@10 and
R@1000tok; PrefEval: the preference's message), and the folds: each conversation (a LoCoMo
sample, a BEAM chat, a PrefEval tenant) held out in turn, a choice made on the others, measured on
it, and how often each choice was made (the spread)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

REPO = Path(__file__).resolve().parents[1]
# ../shared beside the clone (a worktree of it: one level further up)
SHARED = next(
    (p / "shared" for p in REPO.parents if (p / "shared" / "eval").is_dir()), REPO.parent / "shared"
)
sys.path.insert(0, str(SHARED / "eval"))

LIMIT = 10
BUDGET = 1000  # tokens, as the checkers count them (words / 0.75)
T = TypeVar("T")
V = TypeVar("V", bound=Hashable)


@dataclass(frozen=True)
class Question:
    dataset: str
    group: str  # the conversation (tenant) it belongs to
    text: str
    evidence: frozenset[str]  # message ids
    answer: str = ""  # LoCoMo: the gold answer; PrefEval: the preference as stated


def ntokens(text: str) -> int:
    return max(1, round(len(text.split()) / 0.75))


def locomo_questions() -> list[Question]:
    from locomo_common import load  # type: ignore[import-not-found]

    path = SHARED / "data" / "locomo" / "locomo-dev.json"
    gold = {
        (s["sample_id"], q["question"]): str(q["answer"])
        for s in json.loads(path.read_text())
        for q in s["qa"]
        if "answer" in q
    }
    out = []
    for sid, _, _, _, qs in load(str(path)):
        out += [
            Question(
                "locomo",
                sid,
                q.question,
                frozenset(f"{sid}/{e}" for e in q.evidence),
                gold.get((sid, q.question), ""),
            )
            for q in qs
        ]
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
    return [Question("prefeval", q["user"], q["question"], frozenset([q["id"]]), q["preference"]) for q in qs]


LOADERS: dict[str, Callable[[], list[Question]]] = {
    "locomo": locomo_questions,
    "beam": beam_questions,
    "prefeval": prefeval_questions,
}


def measure(q: Question, hits: list[tuple[frozenset[str], int]]) -> tuple[float, float]:
    """R@10 and R@1000tok of ``hits`` (each: its source message ids and its tokens), in order."""
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


def set_masks(questions: Sequence[Question]) -> list[Any]:
    """One boolean mask over ``questions`` per dev set, in the order the sets first appear."""
    return [
        np.array([q.dataset == name for q in questions])
        for name in dict.fromkeys(q.dataset for q in questions)
    ]


def trained(masks: Sequence[Any], keep: Any) -> list[Any]:
    """Each set's questions that ``keep`` keeps (a set with none left is dropped)."""
    return [m & keep for m in masks if (m & keep).any()]


def leave_one_out(
    questions: Sequence[Question], pick: Callable[[Any], T], datasets: Iterable[str] | None = None
) -> dict[str, T]:
    """Per conversation (of ``datasets``; default: every question's), in the order first met: what
    ``pick`` chooses from the questions it keeps (a boolean mask: every question of the other
    conversations, including questions of another dataset asked of them)."""
    only = None if datasets is None else set(datasets)
    groups = dict.fromkeys(q.group for q in questions if only is None or q.dataset in only)
    return {group: pick(np.array([q.group != group for q in questions])) for group in groups}


def held_out(
    questions: Sequence[Question], rows: Mapping[V, Sequence[T]], chosen: Mapping[str, V]
) -> list[T | None]:
    """Each question's figure under the choice of the fold that held its conversation out (None
    for a question of a conversation no fold held out)."""
    return [rows[chosen[q.group]][i] if q.group in chosen else None for i, q in enumerate(questions)]


def spread(values: Iterable[Any]) -> str:
    """How often each value was chosen: ``v xN, ...`` in the values' order."""
    return ", ".join(f"{v} x{n}" for v, n in sorted(Counter(values).items()))


def spread_by_set(questions: Sequence[Question], chosen: Mapping[str, Any]) -> list[str]:
    """Per set, how often each value was chosen by the folds holding out one of its conversations."""
    set_of = {q.group: q.dataset for q in questions}
    by_set: dict[str, list[Any]] = {}
    for group, value in chosen.items():
        by_set.setdefault(set_of[group], []).append(value)
    return [f"  folds holding out a {name} conversation: {spread(vs)}" for name, vs in by_set.items()]
