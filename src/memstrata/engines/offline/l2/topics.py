"""Topic grouping for the offline scene writer: which scene an atom belongs to.

Each atom carries its L1 topic label (``scene_name``, e.g. ``art-family``); its words are the
atom's topic tokens. A scene *owns* the tokens most of whose carriers it holds, so labels keep
landing in the same scene across runs without storing anything beyond membership. An atom joins
the scene owning most of its tokens (ties: the nearest centroid); an atom whose tokens nobody owns
waits, and a token shared by enough waiting atoms founds a new scene. Centroids come from the
store's embedding vectors when every atom has one, else from hashed content words.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from memstrata.engines.offline.atom_text import content_words
from memstrata.engines.offline.lexicon import GENERIC, STOPWORDS
from memstrata.models import Atom, Vectors
from memstrata.retrieval.terms import has_unspaced

HASH_DIMENSIONS = 1024
MAIN_SHARE = 0.3  # a scene owns the tokens carried at least this often, relative to its main one
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def tokens(a: Atom, skip: frozenset[str] = frozenset()) -> frozenset[str]:
    """The atom's topic tokens: the words of its L1 label, minus fillers and ``skip`` (people's
    names: "caroline-adoption" is about adoption)."""
    return frozenset(
        t
        for t in _TOKEN.findall(a.scene_name.lower())
        if (len(t) > 2 or (len(t) > 1 and has_unspaced(t)))
        and t not in STOPWORDS
        and t not in GENERIC
        and t not in skip
    )


class Features:
    """A unit vector per atom: the stored embeddings when all atoms have one (same size), else
    hashed content words (``skip`` names people, who say nothing about a topic)."""

    def __init__(self, atoms: Iterable[Atom], vectors: Mapping[str, Vectors], skip: frozenset[str]) -> None:
        atoms = list(atoms)
        sizes = {vectors[a.id].shape[-1] for a in atoms if a.id in vectors}
        self.embedded = bool(atoms) and len(sizes) == 1 and all(a.id in vectors for a in atoms)
        self._skip = skip
        self._vec: dict[str, Vectors] = {}
        for a in atoms:
            raw = vectors[a.id].astype(np.float32) if self.embedded else self._hashed(a)
            norm = float(np.linalg.norm(raw))
            self._vec[a.id] = raw / norm if norm else raw

    def _hashed(self, a: Atom) -> Vectors:
        v = np.zeros(HASH_DIMENSIONS, dtype=np.float32)
        for w in content_words(f"{a.content} {a.scene_name.replace('-', ' ')}", self._skip):
            digest = hashlib.blake2b(w.encode("utf-8"), digest_size=4).digest()
            v[int.from_bytes(digest, "little") % HASH_DIMENSIONS] += 1.0
        return v

    def of(self, a: Atom) -> Vectors:
        return self._vec[a.id]

    def centroid(self, atoms: Sequence[Atom]) -> Vectors:
        c: Vectors = np.vstack([self._vec[a.id] for a in atoms]).sum(axis=0, dtype=np.float32)
        norm = float(np.linalg.norm(c))
        return c / norm if norm else c


class Topics:
    """Scenes (file name -> member atoms) and the token ownership derived from them."""

    def __init__(
        self, scenes: Mapping[str, Sequence[Atom]], features: Features, skip: frozenset[str]
    ) -> None:
        self.scenes = {name: list(members) for name, members in scenes.items() if members}
        self._features = features
        self._skip = skip
        self.owners: dict[str, str] = {}
        self._centroids: dict[str, Vectors] = {}
        self.refresh()

    def add(self, name: str, atoms: Sequence[Atom]) -> None:
        """Put ``atoms`` into scene ``name`` (a new scene when it has none yet)."""
        self.scenes.setdefault(name, []).extend(atoms)
        self._centroids.pop(name, None)

    def merge(self, source: str, target: str) -> list[Atom]:
        """Move every atom of ``source`` into ``target`` and drop ``source``; returns the moved."""
        moved = self.scenes.pop(source)
        self._centroids.pop(source, None)
        self.add(target, moved)
        return moved

    def centroid(self, name: str) -> Vectors:
        if name not in self._centroids:
            self._centroids[name] = self._features.centroid(self.scenes[name])
        return self._centroids[name]

    def refresh(self) -> None:
        """Recompute ownership: a token is a scene's when the scene holds at least 2 of its carriers
        and ``MAIN_SHARE`` of its main token's count (a token seen once in a big scene stays free);
        a token two scenes could own goes to the one holding more carriers (then the larger one)."""
        best: dict[str, tuple[int, int, str]] = {}
        for name in sorted(self.scenes):
            members = self.scenes[name]
            counts = Counter(t for a in members for t in tokens(a, self._skip))
            floor = max(2.0, MAIN_SHARE * max(counts.values(), default=0))
            for token, n in counts.items():
                rank = (n, len(members), name)
                if n >= floor and (token not in best or rank[:2] > best[token][:2]):
                    best[token] = rank
        self.owners = {token: rank[2] for token, rank in best.items()}

    def place(self, a: Atom) -> str | None:
        """The scene owning most of the atom's tokens (ties: nearest centroid), or None."""
        votes = Counter(self.owners[t] for t in tokens(a, self._skip) if t in self.owners)
        if not votes:
            return None
        top = max(votes.values())
        tied = sorted(name for name, n in votes.items() if n == top)
        return tied[0] if len(tied) == 1 else self.nearest(a, tied)

    def nearest(self, a: Atom, among: Sequence[str] | None = None) -> str:
        """The scene (of ``among``, default all) whose centroid is closest to the atom."""
        names = sorted(among if among is not None else self.scenes)
        v = self._features.of(a)
        return max(names, key=lambda n: float(self.centroid(n) @ v))

    def founding_token(self, waiting: Sequence[Atom], minimum: int) -> str | None:
        """The token most waiting atoms share, if at least ``minimum`` do (ties: alphabetical)."""
        counts = Counter(t for a in waiting for t in tokens(a, self._skip))
        if not counts:
            return None
        token, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return token if n >= minimum else None

    def carriers(self, waiting: Sequence[Atom], token: str) -> list[Atom]:
        return [a for a in waiting if token in tokens(a, self._skip)]

    def merge_pair(self) -> tuple[str, str]:
        """``(smallest scene, its nearest other scene)``: the merge that frees a slot at least cost."""
        small = min(self.scenes, key=lambda n: (len(self.scenes[n]), n))
        c = self.centroid(small)
        others = sorted(n for n in self.scenes if n != small)
        target = max(others, key=lambda n: float(self.centroid(n) @ c))
        return small, target
