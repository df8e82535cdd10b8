"""The Porter stem shared by relevance and the SQLite keyword index, under concurrent threads."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import snowballstemmer

from memstrata.retrieval.terms import porter_stem

WORDS = [
    f"{stem}{end}"
    for stem in ("climb", "allerg", "relat", "nation", "connect")
    for end in ("ing", "ed", "ies", "ional", "ions", "s", "ness", "ations")
]


@contextmanager
def switching_often() -> Iterator[None]:
    """Threads handed the interpreter lock every microsecond: a race shows in a short test."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def stems_in_threads(stem: Callable[[str], str], threads: int = 8, rounds: int = 300) -> list[dict[str, str]]:
    found: list[dict[str, str]] = [{} for _ in range(threads)]

    def work(i: int) -> None:
        for _ in range(rounds):
            for w in WORDS:
                got = stem(w)
                if found[i].setdefault(w, got) != got:
                    found[i][w] = "<garbled>"

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    with switching_often():
        for t in workers:
            t.start()
        for t in workers:
            t.join()
    return found


def test_threads_stemming_at_once_get_the_stems_one_thread_gets() -> None:
    # One snowballstemmer object shared by the threads fails this (tried: garbled stems).
    alone = {w: snowballstemmer.stemmer("porter").stemWord(w) for w in WORDS}
    for found in stems_in_threads(porter_stem.__wrapped__):  # the stemming itself, not the cache
        assert found == alone
