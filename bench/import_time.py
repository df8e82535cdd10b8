"""Import time of the LoCoMo dev set through the CLI, against a capture-only import in the same run.

    python bench/import_time.py [DATA.json]

Runs ``memstrata import`` three times in fresh data dirs: capture only without embeddings (the
baseline: parsing, sanitizing, SQLite, FTS5, mirrors), the full import with the default settings
(embeddings when a local model is installed, then the offline pipeline), and a re-import of the
same file into the full data dir (must change nothing).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


def run(data: Path, home: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    exe = Path(sys.executable).parent / "memstrata"
    t0 = time.perf_counter()
    r = subprocess.run(
        [str(exe), "--data-dir", str(home), "import", str(data), *extra],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
    )
    if r.returncode != 0:
        raise SystemExit(f"import failed: {r.stdout}\n{r.stderr}")
    return time.perf_counter() - t0, " ".join(r.stdout.split()[-20:])


def main() -> int:
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else DATA
    tmp = Path(tempfile.mkdtemp(prefix="bench-import-"))
    base, _ = run(data, tmp / "base", "--no-process", env={"MEMSTRATA_EMBEDDING__PROVIDER": "none"})
    full, summary = run(data, tmp / "full")
    again, resummary = run(data, tmp / "full")
    print(
        f"import_time: full {full:.1f} s vs capture-only keyword {base:.1f} s (x{full / base:.1f}); "
        f"re-import {again:.1f} s | {summary} | again: {resummary}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
