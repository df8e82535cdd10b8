"""Write a TencentDB-Agent-Memory directory (read by ``importers.tdai``) into a memory, idempotently.

- L0 through the capture path (ids kept, and the store time a line gives; a stored id is
  skipped), session by session;
- L1 committed like the L1 runner commits (``atom_commit``), ids kept, together with the L1 cursor of
  the session moved to its last imported message, so the pipeline does not extract them again;
- L2 scene files and the L3 persona written only where the memory has none of that name yet (so a
  re-import, or one after the pipeline has moved on, changes nothing), then the scene index
  rebuilt from the files (``layers.l2.index``, as an L2 run does) and the persona navigation
  refreshed (``persona_doc.refresh_navigation``);
- the L2 cursor moved past the imported atoms of a tenant whose scenes were imported (those scenes
  already consolidate them), unless atoms of the memory's own lie among them; a tenant left with
  atoms to consolidate is handed to ``on_atoms`` (the L2 scheduler's hook, as after an L1 run).

The facade runs it while the pipeline is held off (``Pipeline.exclusive``), so no L1, L2 or L3 run
sees a half-imported tenant.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from memstrata.interchange.tdai.read import TdaiData, TdaiImportReport, TdaiProfile
from memstrata.layers.l0.recorder import CaptureResult
from memstrata.layers.l2 import index as scene_index
from memstrata.layers.l2 import names as scene_names
from memstrata.layers.l3 import persona_doc
from memstrata.models import Atom, AtomFilter, NewMessage, SceneEntry, Tenant
from memstrata.pipeline.l1.commit import commit_atoms
from memstrata.ports import Store, UpperLayers
from memstrata.retrieval.vectors import VectorState

log = logging.getLogger(__name__)
# (tenant, session key, session id, messages, their store times by id) -> what capture did
Capture = Callable[[Tenant, str, str, list[NewMessage], Mapping[str, int]], CaptureResult]
Key = tuple[Tenant, str]  # tenant, session key
BATCH = 500  # messages per capture call
PAGE = 500  # ids per store lookup, atoms per listing page


@dataclass(slots=True)
class _Tally:
    messages_stored: int = 0
    messages_present: int = 0
    messages_dropped: int = 0
    atoms_stored: int = 0
    atoms_present: int = 0
    scenes_written: int = 0
    scenes_present: int = 0
    scenes_renamed: int = 0
    personas_written: int = 0
    personas_present: int = 0
    degradations: dict[str, None] = field(default_factory=dict)  # ordered set
    top_atom: dict[Tenant, int] = field(default_factory=dict)  # highest seq stored, per tenant


class TdaiImport:
    """Writes one ``TdaiData`` into ``store`` and ``upper`` (blocking: run it in a worker thread)."""

    def __init__(
        self,
        store: Store,
        upper: UpperLayers | None,
        capture: Capture,
        vectors: VectorState,
        on_atoms: Callable[[Tenant], None] | None = None,
    ) -> None:
        self._store = store
        self._upper = upper
        self._capture = capture
        self._vectors = vectors
        self._on_atoms = on_atoms

    def run(self, data: TdaiData) -> TdaiImportReport:
        """Write everything; returns what was written and what was already there."""
        t = _Tally()
        cursors = self._messages(data, t)
        self._atoms(data, cursors, t)
        ids: dict[Tenant, set[str]] = {}
        for a in data.atoms:
            ids.setdefault(a.tenant, set()).add(a.id)
        for profile in data.profiles:
            self._profile(profile, ids.get(profile.tenant, set()), t)
        for tenant, top in t.top_atom.items():
            if self._on_atoms is not None and self._store.pipeline.tenant(tenant).l2_cursor < top:
                self._on_atoms(tenant)
        return TdaiImportReport(
            sessions=len({(s.tenant, s.session_key) for s in data.sessions}),
            messages_stored=t.messages_stored,
            messages_present=t.messages_present,
            messages_dropped=t.messages_dropped,
            atoms_stored=t.atoms_stored,
            atoms_present=t.atoms_present,
            scenes_written=t.scenes_written,
            scenes_present=t.scenes_present,
            scenes_renamed=t.scenes_renamed,
            personas_written=t.personas_written,
            personas_present=t.personas_present,
            skipped=data.skipped,
            duplicates=data.duplicates,
            degradations=tuple(t.degradations),
        )

    # --- L0 / L1 --------------------------------------------------------------------------------

    def _messages(self, data: TdaiData, t: _Tally) -> dict[Key, int]:
        """Capture every session; returns the L1 cursor each session key should get."""
        imported: dict[Key, set[str]] = {}
        top: dict[Key, int] = {}
        for s in data.sessions:
            key = (s.tenant, s.session_key)
            for i in range(0, len(s.messages), BATCH):
                chunk = list(s.messages[i : i + BATCH])
                stored_at = _stored_at(data, s.tenant, chunk)
                r = self._capture(s.tenant, s.session_key, s.session_id, chunk, stored_at)
                t.messages_stored += len(r.stored)
                t.messages_present += len(r.duplicates)
                t.messages_dropped += len(r.dropped)
                t.degradations.update(dict.fromkeys(r.degradations))
                if r.stored:
                    top[key] = max(top.get(key, 0), *(m.seq for m in r.stored))
            imported.setdefault(key, set()).update(m.id for m in s.messages if m.id)
        cursors: dict[Key, int] = {}
        for key, mids in imported.items():
            # The session's last message when it is an imported one (also after a crash between
            # capture and commit); else the last message this import stored.
            last = self._store.messages.last(*key)
            seq = last.seq if last is not None and last.id in mids else top.get(key)
            if seq:
                cursors[key] = seq
        return cursors

    def _atoms(self, data: TdaiData, cursors: dict[Key, int], t: _Tally) -> None:
        """Commit the atoms of each session with its cursor (one transaction per session)."""
        groups: dict[Key, list[Atom]] = {key: [] for key in cursors}
        for a in data.atoms:
            groups.setdefault((a.tenant, a.session_key), []).append(a)
        for (tenant, session_key), atoms in groups.items():
            seq = cursors.get((tenant, session_key))
            cursor = (session_key, seq) if seq is not None else None
            stored = commit_atoms(self._store, tenant, atoms, {}, cursor)
            problems = self._vectors.embed_atoms(tenant, stored)
            t.atoms_stored += len(stored)
            if stored:
                t.top_atom[tenant] = max(t.top_atom.get(tenant, 0), *(a.seq for a in stored))
            t.atoms_present += len(atoms) - len(stored)
            t.degradations.update(dict.fromkeys(problems))

    # --- L2 / L3 --------------------------------------------------------------------------------

    def _profile(self, p: TdaiProfile, atom_ids: set[str], t: _Tally) -> None:
        if self._upper is None:
            if p.scenes or p.persona:
                t.degradations[
                    "this memory has no scene or persona store: scenes and personas not imported"
                ] = None
            return
        scenes = self._upper.scenes
        present = {s.name for s in scenes.load(p.tenant)}
        original = {new: old for old, new in p.renamed.items()}
        for scene in p.scenes:
            if scene.name in present:
                t.scenes_present += 1
                continue
            scenes.save(p.tenant, scene)
            t.scenes_written += 1
            t.scenes_renamed += scene.name in original
        entries = self._index(p.tenant, atom_ids, p.membership) if p.scenes else scenes.index(p.tenant)
        self._persona(p, entries, t)
        if p.scenes and atom_ids:
            self._skip_consolidated(p.tenant, atom_ids)

    def _index(self, tenant: Tenant, atom_ids: set[str], given: Mapping[str, str]) -> list[SceneEntry]:
        """Rebuild the scene index: atoms keep the scene the memory's index gave them, else the one
        the imported index (``given``) names; other imported ones go to the scene their
        ``scene_name`` names, else to the most similar scene."""
        assert self._upper is not None
        on_disk = self._upper.scenes.load(tenant)
        names = {s.name for s in on_disk}
        held = {**{i: n for i, n in given.items() if i in atom_ids}, **self._store.members.get(tenant)}
        current = [a for a in self._get(tenant, set(held) | atom_ids) if a.superseded_by is None]
        membership = {a.id: held[a.id] for a in current if held.get(a.id) in names}
        loose = [a for a in current if a.id not in membership]
        for a in loose:
            named = scene_names.normalise(a.scene_name) if a.scene_name else ""
            if named in names:
                membership[a.id] = named
        membership |= scene_index.attribute([a for a in loose if a.id not in membership], on_disk)
        entries = scene_index.rebuild(on_disk, membership, {a.id: a.seq for a in current})
        self._upper.scenes.save_index(tenant, entries)
        self._store.members.replace(tenant, membership)
        return entries

    def _persona(self, p: TdaiProfile, entries: list[SceneEntry], t: _Tally) -> None:
        assert self._upper is not None
        if p.persona is not None and self._upper.persona.read(p.tenant) is None:
            self._upper.persona.write(p.tenant, persona_doc.compose(p.persona, entries))
            t.personas_written += 1
            return
        t.personas_present += p.persona is not None
        persona_doc.refresh_navigation(self._upper, p.tenant, entries)

    def _skip_consolidated(self, tenant: Tenant, atom_ids: set[str]) -> None:
        """Move the L2 cursor to the last imported atom, when every current atom between the cursor
        and it is an imported one (atoms of the memory's own must still go through L2)."""
        top = max((a.seq for a in self._get(tenant, atom_ids)), default=0)
        state = self._store.pipeline.tenant(tenant)
        after = state.l2_cursor
        while after < top:
            page = self._store.atoms.list(tenant, AtomFilter(), limit=PAGE, after_seq=after)
            if not page:
                break
            if any(a.seq <= top and a.id not in atom_ids for a in page):
                log.info("%s: atoms not imported await L2; imported scenes' atoms go through L2 too", tenant)
                return
            after = page[-1].seq
        if top > state.l2_cursor:
            state.l2_cursor = top
            self._store.pipeline.save_tenant(state)

    def _get(self, tenant: Tenant, ids: Iterable[str]) -> list[Atom]:
        wanted = sorted(ids)
        found: list[Atom] = []
        for i in range(0, len(wanted), PAGE):
            found += self._store.atoms.get(tenant, wanted[i : i + PAGE])
        return found


def _stored_at(data: TdaiData, tenant: Tenant, messages: list[NewMessage]) -> dict[str, int]:
    """The store times the source gives for these messages, by id."""
    found = ((m.id, data.recorded.get((tenant, m.id))) for m in messages if m.id)
    return {mid: t for mid, t in found if t is not None}
