"""What the dev-set benchmarks share: the judge's own functions (from ``../shared/eval``: the
answer measure, its tokens, the LoCoMo loader and the evidence scorer), the dev set's path and
gold answers, their common arguments, and percentages printed as the judge does."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
DEV_SET = SHARED / "data" / "locomo" / "locomo-dev.json"
sys.path.insert(0, str(SHARED / "eval"))

from context_check import answer_recall, tokens  # type: ignore[import-not-found]  # noqa: E402
from locomo_common import CATS, load, score  # type: ignore[import-not-found]  # noqa: E402

__all__ = ["CATS", "DEV_SET", "answer_recall", "arguments", "gold_answers", "load", "pct", "score", "tokens"]


def arguments(doc: str | None) -> argparse.Namespace:
    """``--data-dir`` (an imported dev set), ``--data`` (the LoCoMo file) and ``--limit``."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", required=True, type=Path)
    ap.add_argument("--data", type=Path, default=DEV_SET)
    ap.add_argument("--limit", type=int, default=10**9, help="questions per conversation")
    parsed = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the local model only; nothing is downloaded
    return parsed


def gold_answers(data: Path) -> dict[tuple[str, str], str]:
    """``(sample id, question) -> answer`` for every question with one (category 5 has none)."""
    return {
        (s["sample_id"], q["question"]): str(q["answer"])
        for s in json.loads(data.read_text())
        for q in s["qa"]
        if "answer" in q
    }


def pct(values: Sequence[float]) -> float:
    return round(100 * sum(values) / max(1, len(values)), 1)
