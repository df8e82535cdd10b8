"""``OfflineSceneWriter``: the ``SceneWriter`` of the offline engine. Deterministic, no network.

Per batch (see ``topics`` for how atoms find scenes):
1. each atom joins the scene that owns its topic tokens (update by default);
2. the rest wait; if enough waiting atoms share a token, they found ONE new scene (a tenant's first
   batch, with no scene yet, founds one per such token); when the tenant is at ``max_scenes``, the
   smallest scene is first merged into its nearest neighbour, and only for a group larger than
   that smallest scene;
3. on the final batch, whatever still waits joins its nearest scene (or, with no scene at all,
   founds one);
4. every scene that changed (or that the runner asks to rewrite: it lost atoms) is re-rendered
   from all its atoms (``l2.render``); a merged-away scene is soft-deleted (``[DELETED]``).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from memstrata.engines.offline import atom_text as st
from memstrata.engines.offline import user
from memstrata.engines.offline.l2 import naming, render
from memstrata.engines.offline.l2.topics import Features, Topics
from memstrata.layers.l2 import names
from memstrata.layers.l2.scene_file import DELETED, render_scene
from memstrata.models import Atom, ConsolidationResult, Scene
from memstrata.ports import ConsolidationRequest

MIN_SCENE_ATOMS = 2
# A new scene needs at least 1/(5 * max_scenes) of the tenant's atoms and sqrt(atoms)/3 of them:
# a full set of scenes then holds the big topics, and one-off words never found a scene.
FOUNDING_SHARE = 5


def founding_minimum(total_atoms: int, max_scenes: int, floor: int = MIN_SCENE_ATOMS) -> int:
    """How many waiting atoms must share a topic to found a scene in a tenant of ``total_atoms``."""
    by_share = math.ceil(total_atoms / (FOUNDING_SHARE * max_scenes))
    return max(floor, by_share, math.ceil(math.sqrt(total_atoms) / 3))


@dataclass(slots=True)
class _Batch:
    topics: Topics
    placed: dict[str, str] = field(default_factory=dict)
    touched: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)

    def put(self, name: str, atoms: Sequence[Atom]) -> None:
        self.topics.add(name, atoms)
        self.placed.update((a.id, name) for a in atoms)
        self.touched.add(name)


class OfflineSceneWriter:
    """``SceneWriter``: groups atoms into at most ``max_scenes`` topic scenes and renders them.

    ``min_scene_atoms`` is the least number of waiting atoms that must share a topic to found a
    scene (more in a bigger tenant: see ``founding_minimum``).
    """

    def __init__(self, min_scene_atoms: int = MIN_SCENE_ATOMS) -> None:
        self.min_scene_atoms = min_scene_atoms

    async def consolidate(self, request: ConsolidationRequest) -> ConsolidationResult:
        """Place the batch's atoms and rewrite the changed scene files (in a worker thread)."""
        return await asyncio.to_thread(self._consolidate, request)

    def _consolidate(self, request: ConsolidationRequest) -> ConsolidationResult:
        on_disk = {s.name: s for s in request.scenes}
        members = {n: list(m) for n, m in request.members.items() if n in on_disk}
        everyone = [*request.atoms, *(a for m in members.values() for a in m)]
        people = st.people(everyone)
        alias = user.user_name(everyone, people)  # the name a nameless user gave: no topic word
        names_of_people = frozenset(p.lower() for p in [*people, *([alias] if alias else [])])
        features = Features(everyone, request.vectors, names_of_people)
        batch = _Batch(Topics(members, features, names_of_people))
        # Scenes that lost atoms are re-rendered from those they still hold (the runner shows
        # them blank); one that holds none is not written, and the runner removes it.
        batch.touched.update(n for n in request.rewrite if n in batch.topics.scenes)
        waiting = [a for a in request.atoms if not self._join(batch, a)]
        minimum = founding_minimum(request.total_atoms, request.max_scenes, self.min_scene_atoms)
        waiting = self._found(batch, waiting, minimum, request.max_scenes, set(on_disk))
        while not on_disk and waiting and len(batch.topics.scenes) < request.max_scenes:
            # A first batch may found several scenes: its atoms have nowhere else to go, and one
            # scene for everything would be a topic called after whichever label came first.
            before = len(waiting)
            waiting = self._found(batch, waiting, minimum, request.max_scenes, set(on_disk))
            if len(waiting) == before:
                break
        if request.final and waiting:
            self._settle(batch, waiting, set(on_disk), names_of_people)
            waiting = []
        self._rename_drifted(batch, set(on_disk), names_of_people)
        self._write(request, batch, on_disk, everyone, [*people, *([alias] if alias else [])], alias)
        return ConsolidationResult(placed=batch.placed, deferred=tuple(a.id for a in waiting))

    def _join(self, batch: _Batch, a: Atom) -> bool:
        name = batch.topics.place(a)
        if name is None:
            return False
        batch.put(name, [a])
        return True

    def _found(
        self, batch: _Batch, waiting: list[Atom], minimum: int, max_scenes: int, taken: set[str]
    ) -> list[Atom]:
        """At most one new scene from the waiting atoms; returns those still waiting."""
        topics = batch.topics
        token = topics.founding_token(waiting, minimum)
        if token is None:
            return waiting
        group = topics.carriers(waiting, token)
        if len(topics.scenes) >= max_scenes:
            small, target = topics.merge_pair()
            if len(group) <= len(topics.scenes[small]):
                return waiting  # not worth a slot: the final batch settles these atoms
            moved = topics.merge(small, target)
            batch.placed.update((a.id, target) for a in moved)
            batch.touched.add(target)
            batch.removed.add(small)
        name = names.unique(token, taken | set(topics.scenes) | batch.removed)
        batch.put(name, group)
        topics.refresh()
        chosen = {a.id for a in group}
        return [a for a in waiting if a.id not in chosen]

    def _settle(self, batch: _Batch, waiting: list[Atom], taken: set[str], people: frozenset[str]) -> None:
        """Final batch: every waiting atom joins its nearest scene (founding one if there is none,
        named after its two most distinctive words)."""
        topics = batch.topics
        if not topics.scenes:
            words = st.Vocabulary(waiting, people).keywords(waiting, 2)
            batch.put(names.unique("-".join(words) or "general", taken | batch.removed), waiting)
            return
        for a in waiting:
            batch.put(topics.nearest(a), [a])

    def _rename_drifted(self, batch: _Batch, taken: set[str], people: frozenset[str]) -> None:
        """A changed scene whose content drifted from its name takes its topic's name (the file,
        its members and so the index and the navigation follow), when no scene has that name."""
        topics = batch.topics
        for name in sorted(batch.touched - batch.removed):
            if name not in topics.scenes:
                continue
            topic = naming.better_name(name, topics.scenes[name], people)
            if topic is None:
                continue
            target = names.normalise(topic)
            if target in taken or target in topics.scenes or target in batch.removed:
                continue
            moved = topics.merge(name, target)
            batch.placed.update((a.id, target) for a in moved)
            batch.touched.add(target)
            batch.removed.add(name)
        topics.refresh()

    def _write(
        self,
        request: ConsolidationRequest,
        batch: _Batch,
        on_disk: dict[str, Scene],
        everyone: list[Atom],
        people: list[str],
        alias: str | None,
    ) -> None:
        vocab = st.Vocabulary(everyone, frozenset(p.lower() for p in people))
        for name in sorted(batch.removed):
            if name in on_disk:
                request.folder.write(name, DELETED + "\n")
        for name in sorted(batch.touched - batch.removed):
            atoms = sorted(batch.topics.scenes[name], key=lambda a: a.seq)
            old = on_disk.get(name)
            scene = Scene(
                name=name,
                summary=render.summary(name, atoms, vocab, alias),
                heat=old.heat if old else 0,
                created=old.created if old else request.now,
                updated=request.now,
                body=render.body(name, atoms, vocab, alias),
            )
            request.folder.write(name, render_scene(scene))
