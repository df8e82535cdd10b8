"""What each framework extra costs: the installed size of the packages it adds to memstrata's own
dependencies, and the import time of its adapter against ``import memstrata`` in the same run.

    python bench/integration_cost.py [--runs 5]

Size: the files of every distribution the extra's package needs (its requirement closure, as
installed here) that ``memstrata`` itself (with the ``server`` extra) does not already pull in.
Time: the median wall time of a fresh interpreter importing the adapter module, and the same for
``import memstrata`` (the baseline), so the ratio says what the adapter adds.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

EXTRAS = {
    "langgraph": ("langgraph", "memstrata.integrations.langgraph"),
    "openai-agents": ("openai-agents", "memstrata.integrations.openai_agents"),
    "pydantic-ai": ("pydantic-ai-slim", "memstrata.integrations.pydantic_ai"),
}


def _name(requirement: str) -> str | None:
    found = re.match(r"[A-Za-z0-9._-]+", requirement)
    return found.group(0).lower().replace("_", "-") if found else None


def closure(root: str, extras: tuple[str, ...] = ()) -> set[str]:
    """The installed distributions ``root`` needs (its ``extras`` included), itself too."""
    seen: set[str] = set()
    todo = [root]
    wanted = {f'extra == "{e}"' for e in extras}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        for req in dist.requires or []:
            # a requirement of an extra counts only for the extras asked of the root
            if "extra ==" in req and not (name == root and any(w in req for w in wanted)):
                continue
            picked = _name(req)
            if picked:
                todo.append(picked)
    return seen


def size_mb(names: set[str]) -> float:
    total = 0
    for name in names:
        for f in metadata.distribution(name).files or []:
            p = Path(f.locate())
            if p.is_file():
                total += p.stat().st_size
    return total / 1e6


def import_s(module: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    runs = ap.parse_args().runs
    base = closure("memstrata", ("server",))
    base_s = import_s("memstrata", runs)
    print(f"baseline: import memstrata {base_s * 1000:.0f} ms (median of {runs})")
    for extra, (dist, module) in EXTRAS.items():
        added = closure(dist) - base
        t = import_s(module, runs)
        print(
            f"memstrata[{extra}]: +{size_mb(added):.1f} MB in {len(added)} distributions; "
            f"import {module} {t * 1000:.0f} ms (x{t / base_s:.2f} of import memstrata)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
