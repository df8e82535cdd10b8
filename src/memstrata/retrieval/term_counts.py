"""How many records hold each query term, kept a little while between searches.

Reading a term's count walks its whole posting list, so the common words the counts exist for
(those the keyword query prunes, and weighs least) cost the most: on the proxy bench's store the
two layers' reads were 1.0 of a search's 6.5 ms, most of it for a word found in 70 % of the
messages. An agent's prompts share their words ("remember", the user's name), so a count read for
one turn serves the next ones: kept, a search's reads cost 0.16-0.34 ms less there (its first
read still reloads the reader's pages after a commit; docs/benchmarks.md).

A kept count is used while it can be only a little wrong: for at most ``MAX_AGE_S`` seconds and
while its layer grew by at most ``MAX_GROWTH`` of what it held when counted. The counts only
prune and weigh terms (a share of records), so a count off by that much moves a share by at most
as much. Any growth of a layer of fewer than ``1 / MAX_GROWTH`` records reads the counts again,
so small stores (and tests) always see exact ones. Erasing records does not shrink a layer's size,
so there the age alone bounds how long a count outlives them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memstrata.lru import Lru
from memstrata.models import Layer

MAX_AGE_S = 5.0
MAX_GROWTH = 0.01
CAPACITY = 8_192  # (layer, term) pairs kept; a pair is a few hundred bytes


@dataclass(frozen=True, slots=True)
class _Count:
    records: int
    size: int  # the layer's size (``SearchIndex.size``) when counted
    at: float  # ``clock()`` when counted

    def fresh(self, size: int, now: float) -> bool:
        grown = size - self.size
        return now - self.at < MAX_AGE_S and 0 <= grown <= MAX_GROWTH * self.size


Count = Callable[[Layer, Sequence[str]], dict[str, int]]


class TermCounts:
    """``count`` (``SearchIndex.document_counts``: records of a layer holding each term) with
    each (layer, term)'s count kept while it is fresh."""

    def __init__(
        self, count: Count, *, capacity: int = CAPACITY, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._count = count
        self._kept: Lru[_Count] = Lru(capacity)
        self._clock = clock

    def read(self, layer: Layer, terms: Sequence[str], size: int) -> dict[str, int]:
        """Records of ``layer`` holding each of ``terms``; ``size`` is the layer's size now."""
        now = self._clock()
        out: dict[str, int] = {}
        unread: list[str] = []
        for term in dict.fromkeys(terms):
            kept = self._kept.get((layer, term))
            if kept is not None and kept.fresh(size, now):
                out[term] = kept.records
            else:
                unread.append(term)
        if unread:
            read = self._count(layer, unread)
            for term in unread:
                out[term] = read.get(term, 0)
                self._kept.put((layer, term), _Count(out[term], size, now))
        return out
