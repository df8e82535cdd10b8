"""``LocalLeases``: the ``Leases`` of the embedded store. A data directory has one writer process
(the writer lock), so a claim only has to exclude the other claims of this process."""

from __future__ import annotations

import threading


class LocalLeases:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: set[str] = set()

    def claim(self, key: str) -> bool:
        with self._lock:
            if key in self._held:
                return False
            self._held.add(key)
            return True

    def release(self, key: str) -> None:
        with self._lock:
            self._held.discard(key)
