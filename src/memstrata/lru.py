"""The one bounded cache: a map that forgets the least recently used key first; thread-safe.

What memstrata keeps in memory for a while (file reads, term counts, search queries' vectors, the
proxy's injections, prompt marks, search calls per turn, MCP turn numbers and session tenants, the
console's record lists, the key throttle's clients and known keys) is an ``Lru`` of a capacity, so
nothing held per key grows without bound. Reading or writing a key makes it the most recently used."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Lru(Generic[V]):
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"an Lru holds at least one key, not {capacity}")
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def get(self, key: Hashable) -> V | None:
        """The value of ``key`` (now the most recently used), or None."""
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._set(key, value)

    def update(self, key: Hashable, change: Callable[[V | None], V]) -> V:
        """Replace ``key``'s value (None when absent) by ``change(value)`` in one step, so two
        threads counting the same key never lose a count; answers the new value."""
        with self._lock:
            value = change(self._items.get(key))
            self._set(key, value)
            return value

    def pop(self, key: Hashable) -> V | None:
        """Remove ``key``; answers its value, or None."""
        with self._lock:
            return self._items.pop(key, None)

    def discard(self, doomed: Callable[[Hashable], bool]) -> None:
        """Remove every key ``doomed`` picks (an erased tenant's)."""
        with self._lock:
            for key in [k for k in self._items if doomed(k)]:
                del self._items[key]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def _set(self, key: Hashable, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._capacity:
            self._items.popitem(last=False)
