"""Search latency on BEAM dev's tenants (long technical messages) against LoCoMo dev's (short turns),
alternated in one process so both see the same machine.

    python bench/beam_latency.py --beam DIR --locomo DIR [--rounds 3]

Each DIR is a dev set imported by its checker in ../shared/eval (``beam_check.py``,
``locomo_check.py`` with ``--data-dir DIR``). Every round searches each BEAM question and as many
LoCoMo questions, one of each in turn (``limit=50``, the default layers and floor, as the checkers
search), after one warm-up pass. Prints p50 / p95 of each and the ratio of the p95s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = next(
    (p / "shared" for p in REPO.parents if (p / "shared" / "eval").is_dir()), REPO.parent / "shared"
)
sys.path.insert(0, str(SHARED / "eval"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--beam", type=Path, required=True)
    ap.add_argument("--locomo", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from locomo_common import load  # type: ignore[import-not-found]

    from memstrata import Memory

    beam = [
        (q["user"], q["question"]) for q in json.loads((SHARED / "data/beam/questions-dev.json").read_text())
    ]
    locomo = [
        (sid, q.question)
        for sid, _, _, _, qs in load(str(SHARED / "data/locomo/locomo-dev.json"))
        for q in qs
    ]
    locomo = locomo[:: max(1, len(locomo) // len(beam))][: len(beam)]
    times: dict[str, list[float]] = {"beam": [], "locomo": []}
    with Memory.open(str(a.beam), read_only=True) as b, Memory.open(str(a.locomo), read_only=True) as lo:
        for rnd in range(a.rounds + 1):
            for (bu, bq), (lu, lq) in zip(beam, locomo, strict=True):
                for name, mem, user, question in (("beam", b, bu, bq), ("locomo", lo, lu, lq)):
                    t0 = time.perf_counter()
                    mem.search(question, user_id=user, limit=50)
                    if rnd:  # the first pass warms the model, the matrices and the caches
                        times[name].append((time.perf_counter() - t0) * 1000)
    p95 = {}
    for name, ms in times.items():
        ms.sort()
        p95[name] = ms[int(0.95 * (len(ms) - 1))]
        print(f"{name}: {len(ms)} searches, p50 {statistics.median(ms):.1f} ms, p95 {p95[name]:.1f} ms")
    print(f"BEAM p95 / LoCoMo p95 = {p95['beam'] / p95['locomo']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
