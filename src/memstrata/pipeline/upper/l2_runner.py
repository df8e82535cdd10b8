"""One L2 run of a tenant: consolidate the atoms after the L2 cursor into scene files.

Batches of atoms (by seq, so an atom written during the run is read by a later batch or run)
go to the ``SceneWriter`` with the current scenes and their member atoms. Then: cleanup and name
normalisation, META upkeep (created kept, updated on change, heat += atoms consolidated), the
index rebuilt from disk, the persona navigation refreshed. Backups and state belong to the caller
(``TenantScheduler``), which restores the scene folder when this raises.
"""

from __future__ import annotations

import logging
from asyncio import to_thread
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from memstrata.errors import StoreError
from memstrata.layers.l2 import index as scene_index
from memstrata.layers.l3 import persona_doc
from memstrata.models import Atom, AtomFilter, ConsolidationResult, Layer, Scene, SceneEntry, Tenant, Vectors
from memstrata.pipeline.upper.rewrite_view import RewriteView
from memstrata.ports import Clock, ConsolidationRequest, Store, UpperLayers
from memstrata.settings import PersonaSettings, PipelineSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class L2Report:
    """What an L2 run did: the cursor it reached, atoms consolidated, scenes after it."""

    cursor: int
    consolidated: int
    scenes: int
    persona_requests: tuple[str, ...] = ()
    changes: Mapping[str, str | None] = field(default_factory=dict)  # tidy: renamed / removed


@dataclass(slots=True)
class _Run:
    """What a run keeps between batches: who holds which atom, and what is still to place."""

    atoms: dict[str, Atom]  # every atom in play: members and this run's batches
    membership: dict[str, str]  # atom id -> scene file
    pending: list[Atom] = field(default_factory=list)  # deferred by the writer
    unplaced: list[Atom] = field(default_factory=list)  # left out by the writer
    new_ids: set[str] = field(default_factory=set)  # atoms of this run's batches
    requests: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # old scenes the writer left unwritten
    view: RewriteView | None = None  # the folder as the writer sees it, when scenes are replaced


class L2Runner:
    """Runs L2 for one tenant at a time (the caller holds the tenant's lock and the backup)."""

    def __init__(
        self,
        store: Store,
        upper: UpperLayers,
        clock: Clock,
        settings: PipelineSettings,
        persona: PersonaSettings,
    ) -> None:
        self._store = store
        self._upper = upper
        self._clock = clock
        self._s = settings
        self._p = persona

    async def run(
        self, tenant: Tenant, cursor: int, *, rewrite: Sequence[str] = (), rebuild: bool = False
    ) -> L2Report:
        """Consolidate every atom after ``cursor`` (not expired). ``rewrite`` names scenes that
        held removed atoms: the writer sees them blank and rewrites them from their remaining
        members (readers keep the old text until then; see ``RewriteView``).
        ``rebuild`` starts over: the writer sees no scene and every current atom is consolidated
        again; the old scenes it does not write again go at the end (readers keep them until then).
        Raises what the writer or the stores raise."""
        scenes = self._upper.scenes
        before = {s.name: s for s in await to_thread(scenes.load, tenant)}
        if rebuild:
            view = RewriteView(scenes.folder(tenant), {}, hidden=before)
            before, cursor, run, rewrite = {}, 0, _Run({}, {}, view=view), ()
        else:
            run = await to_thread(self._members, tenant, cursor)
            rewrite = [n for n in rewrite if n in before]
            if rewrite:
                run.view = RewriteView(scenes.folder(tenant), {n: before[n] for n in rewrite})
        cursor, consolidated = await self._consolidate(tenant, run, cursor, tuple(rewrite))
        if run.view is not None:
            # Not written again: the old text (a removed atom's with it) goes; the cleanup would
            # remove a blank scene anyway, and its members are attributed to other scenes.
            run.dropped = run.view.unwritten()
            await to_thread(self._drop, tenant, run.dropped)
        changes = {**dict.fromkeys(run.dropped), **await to_thread(scenes.tidy, tenant)}
        entries = await to_thread(self._finish, tenant, run, before, changes)
        await to_thread(persona_doc.refresh_navigation, self._upper, tenant, entries)
        # Last: a failure before this point restores the files, and the stored membership still
        # matches them; after it, files and membership agree on the new state.
        await to_thread(self._store.members.replace, tenant, run.membership)
        return L2Report(cursor, consolidated, len(entries), tuple(run.requests), changes)

    async def _consolidate(
        self, tenant: Tenant, run: _Run, cursor: int, rewrite: tuple[str, ...]
    ) -> tuple[int, int]:
        """Batches after ``cursor`` through the writer (at least one call when scenes are to be
        rewritten); returns the cursor reached and the atoms consolidated."""
        flt = AtomFilter(at=self._clock.now_ms())
        consolidated = 0
        while True:
            size = self._s.l2_batch_size
            batch = await to_thread(self._store.atoms.list, tenant, flt, limit=size + 1, after_seq=cursor)
            final = len(batch) <= size
            batch = batch[:size]
            if not batch and not run.pending and not rewrite:
                break
            await self._batch(tenant, run, batch, final, rewrite)
            rewrite = ()  # the first call rewrites them; later batches update scenes as usual
            consolidated += len(batch)
            cursor = batch[-1].seq if batch else cursor
            if final:
                break
        return cursor, consolidated

    def _members(self, tenant: Tenant, cursor: int) -> _Run:
        """Which scene holds which current atom, from the store (the source of truth; the index
        file of a data directory older than that, else the scene files, when it has none);
        superseded atoms drop out (their successors come with the run)."""
        holder = self._store.members.get(tenant)
        if not holder and cursor:
            try:
                holder = {i: e.name for e in self._upper.scenes.index(tenant) for i in e.atom_ids}
            except StoreError as exc:
                return self._reattributed(tenant, cursor, exc.message)
            if not holder:
                return self._reattributed(tenant, cursor, "no scene membership is stored")
        current = [a for a in self._store.atoms.get(tenant, list(holder)) if a.superseded_by is None]
        return _Run({a.id: a for a in current}, {a.id: holder[a.id] for a in current})

    def _reattributed(self, tenant: Tenant, cursor: int, why: str) -> _Run:
        """Nothing says which scene holds the consolidated atoms: attribute them to the scene files
        again (by similarity)."""
        log.warning("%s: %s; re-attributing consolidated atoms to the scene files", tenant, why)
        done: list[Atom] = []
        while page := self._store.atoms.list(
            tenant, AtomFilter(), limit=1000, after_seq=done[-1].seq if done else 0
        ):
            done += [a for a in page if a.seq <= cursor]
            if page[-1].seq >= cursor:
                break
        membership = scene_index.attribute(done, self._upper.scenes.load(tenant))
        return _Run({a.id: a for a in done}, membership)

    async def _batch(
        self, tenant: Tenant, run: _Run, batch: list[Atom], final: bool, rewrite: tuple[str, ...]
    ) -> None:
        todo = [*run.pending, *batch]
        for a in batch:
            run.atoms[a.id] = a
            run.new_ids.add(a.id)
        request = await to_thread(self._request, tenant, run, todo, final)
        if rewrite:
            request = replace(request, rewrite=rewrite)
        result = await self._upper.scene_writer.consolidate(request)
        self._apply(run, todo, result, final)

    def _drop(self, tenant: Tenant, names: Sequence[str]) -> None:
        for name in names:
            log.info("%s: scene %s was not written again; removed", tenant, name)
            self._upper.scenes.remove(tenant, name)

    def _request(self, tenant: Tenant, run: _Run, todo: list[Atom], final: bool) -> ConsolidationRequest:
        members: dict[str, list[Atom]] = {}
        for atom_id, name in run.membership.items():
            members.setdefault(name, []).append(run.atoms[atom_id])
        in_play = [*todo, *(run.atoms[i] for i in run.membership)]
        scenes = self._upper.scenes.load(tenant)
        # With a view, the writer sees the scenes it replaces blank or not at all; the store keeps
        # their old text for readers until the writer's replaces it.
        return ConsolidationRequest(
            tenant=tenant,
            folder=run.view or self._upper.scenes.folder(tenant),
            atoms=tuple(todo),
            scenes=run.view.shown(scenes) if run.view else tuple(scenes),
            members={k: tuple(sorted(v, key=lambda a: a.seq)) for k, v in members.items()},
            vectors=self._vectors(tenant, in_play),
            max_scenes=self._p.max_scenes,
            final=final,
            now=self._clock.now_ms(),
            total_atoms=self._store.atoms.count(tenant),
        )

    def _vectors(self, tenant: Tenant, atoms: Sequence[Atom]) -> dict[str, Vectors]:
        found = self._store.index.get_vectors(tenant, Layer.L1, [a.seq for a in atoms])
        return {a.id: found[a.seq] for a in atoms if a.seq in found}

    def _apply(self, run: _Run, todo: list[Atom], result: ConsolidationResult, final: bool) -> None:
        for atom_id, name in result.placed.items():
            if atom_id not in run.atoms:
                log.warning("scene writer placed an unknown atom %r; ignored", atom_id)
                continue
            run.membership[atom_id] = name
        deferred = set(result.deferred) if not final else set()
        run.pending = [a for a in todo if a.id in deferred and a.id not in result.placed]
        run.unplaced += [a for a in todo if a.id not in result.placed and a.id not in deferred]
        run.requests += result.persona_requests

    def _finish(
        self, tenant: Tenant, run: _Run, before: dict[str, Scene], changes: Mapping[str, str | None]
    ) -> list[SceneEntry]:
        """Membership after renames, orphans attributed, META upkeep, index saved."""
        _follow_renames(run, changes)
        on_disk = self._upper.scenes.load(tenant)
        names = {s.name for s in on_disk}
        orphans = [run.atoms[i] for i, n in run.membership.items() if n not in names] + run.unplaced
        run.membership.update(scene_index.attribute(orphans, on_disk))
        if orphans and not on_disk:
            log.warning("%s: %d atoms have no scene to go to", tenant, len(orphans))
            for a in orphans:
                run.membership.pop(a.id, None)
        previous = {}
        for name, scene in before.items():
            renamed = changes.get(name, name)
            if renamed is not None:
                previous[renamed] = scene
        added = Counter(n for i, n in run.membership.items() if i in run.new_ids)
        final = [self._upkeep(tenant, s, previous.get(s.name), added[s.name]) for s in on_disk]
        entries = scene_index.rebuild(final, run.membership, {i: a.seq for i, a in run.atoms.items()})
        self._upper.scenes.save_index(tenant, entries)
        return entries

    def _upkeep(self, tenant: Tenant, scene: Scene, old: Scene | None, added: int) -> Scene:
        """The runner owns created, updated and heat; a writer owns the body and the summary."""
        now = self._clock.now_ms()
        summary = scene.summary or _first_line(scene.body)
        if old is None:
            fixed = replace(scene, summary=summary, heat=added, created=now, updated=now)
        else:
            changed = (scene.body.strip(), summary) != (old.body.strip(), old.summary)
            fixed = replace(
                scene,
                summary=summary,
                heat=old.heat + added,
                created=old.created,
                updated=now if changed or added else old.updated,
            )
        if fixed != scene:
            self._upper.scenes.save(tenant, fixed)
        return fixed


def _follow_renames(run: _Run, changes: Mapping[str, str | None]) -> None:
    """Point membership at the names the cleanup gave. Atoms of removed files keep pointing at a
    name that is gone: they are orphans, attributed afterwards."""
    for atom_id, name in run.membership.items():
        renamed = changes.get(name)
        if renamed is not None:
            run.membership[atom_id] = renamed


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text[:200]
    return ""
