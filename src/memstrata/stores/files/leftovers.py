"""What a writer killed mid-write leaves behind, and its sweep.

An atomic file write (``atomic.atomic_write``), a scene snapshot folder and a persona backup are
written under a hidden temporary name, then renamed. A SIGKILL before the rename leaves the
temporary file (or folder) for good: nothing reads it, nothing else removes it. The next writer to
open the data directory, alone there by the writer lock, deletes them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def is_temporary(name: str) -> bool:
    """``.family.md.x1y2.tmp``, ``.scenes-<time>.tmp``, ``.tmp-x1y2.part``: a hidden temporary name."""
    return name.startswith(".") and (
        name.endswith(".tmp") or (name.startswith(".tmp-") and name.endswith(".part"))
    )


def remove_stale_temporaries(root: Path) -> int:
    """Delete every temporary file and folder below ``root``. Call it only as the data directory's
    one writer, before anything writes. Returns how many were deleted."""
    removed = 0
    for folder, dirs, files in os.walk(root):
        for name in [d for d in dirs if is_temporary(d)]:
            shutil.rmtree(Path(folder) / name, ignore_errors=True)
            dirs.remove(name)
            removed += 1
        for name in [f for f in files if is_temporary(f)]:
            (Path(folder) / name).unlink(missing_ok=True)
            removed += 1
    return removed
