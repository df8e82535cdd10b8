"""Two versions of `memstrata import`, side by side: wall and CPU seconds of each on the same seed.

    python bench/import_ab.py SEED.json --base-src /tmp/base/src [--also-src /tmp/mid/src] [--rounds 2]

A runs the code under ``--base-src`` (``PYTHONPATH``; e.g. ``git archive <rev> src | tar -x -C
/tmp/base``), B this tree, and each ``--also-src`` between them; each round imports SEED (its
pipeline included: vectors, L1, L2, L3) into a fresh data directory with each in turn, so all meet
the same moment of the machine. CPU is
the import process's user + system time, children included: on a shared machine wall time
follows the load (the embedding workers run at the lowest priority), CPU much less. Prints one
line per import, then each one's CPU and wall over A's. For BEAM dev, SEED is
``../shared/data/beam/beam-dev.json`` (or a chat of it).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def _cpu_of_children() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def import_once(src: Path, seed: Path, into: Path) -> tuple[float, float, str]:
    """``(wall s, cpu s, last line)`` of importing ``seed`` into ``into`` with the code of ``src``."""
    shutil.rmtree(into, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1"}
    cpu, start = _cpu_of_children(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memstrata", "--data-dir", str(into), "import", str(seed)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall, cpu = time.perf_counter() - start, _cpu_of_children() - cpu
    if done.returncode:
        raise SystemExit(f"import with {src} failed ({done.returncode}): {done.stderr[-800:]}")
    last = " ".join(done.stdout.split()[-8:])
    return wall, cpu, last


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("seed", type=Path)
    ap.add_argument("--base-src", type=Path, required=True, help="the src directory of the base version")
    ap.add_argument("--also-src", type=Path, action="append", default=[], help="another version to run too")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    sides = {"A (base)": a.base_src.resolve()}
    sides |= {f"{src.parent.name}": src.resolve() for src in a.also_src}
    sides["B (this)"] = (HERE / "src").resolve()
    totals = {name: [0.0, 0.0] for name in sides}
    with tempfile.TemporaryDirectory(prefix="import-ab-") as tmp:
        for r in range(a.rounds):
            for name, src in sides.items():
                wall, cpu, last = import_once(src, a.seed, Path(tmp) / "data")
                totals[name][0] += wall
                totals[name][1] += cpu
                print(f"round {r + 1} {name}: wall {wall:.1f} s, cpu {cpu:.1f} s; {last}", flush=True)
    wa, ca = totals["A (base)"]
    for name, (wb, cb) in list(totals.items())[1:]:
        print(f"{name} over A: cpu x{cb / ca:.2f}, wall x{wb / wa:.2f} ({a.rounds} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
