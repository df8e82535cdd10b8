"""The data plane: read, edit and delete what each layer holds, record by record, for one tenant.

Used by the facade's data-plane methods (and through them by the gateway, the client and the CLI).
Every operation names its tenant and every store call filters by it, so one tenant can neither see
nor change another's records. Blocking: the facade runs these in worker threads, and holds the
tenant's pipeline lock around scene and persona writes (an L2/L3 run would otherwise restore its
backup over them).

    messages (L0)   get, delete (by id or whole sessions; atoms left with no source go too), count
    atoms (L1)      get, update (a new version supersedes the old one), delete (with its history),
                    pin and time to live (in place, no new version)
    scenes (L2)     write (create or replace; safe names only), delete; the index follows
    persona (L3)    write (the body; scene navigation is regenerated)

Deleting never leaves a record findable: keyword rows go with the record in one transaction and
vectors right after; the store rewrites its JSONL mirror without it. A removal returns the scenes
that held removed atoms, for the facade to have L2/L3 rewrite them (``forgetting.dependants``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace

from memstrata.errors import ConflictError, InputError, NotFoundError, PathError
from memstrata.forgetting import dependants
from memstrata.layers.l2 import index as scene_index
from memstrata.layers.l2 import names as scene_names
from memstrata.layers.l2.scene_file import one_line, split_meta
from memstrata.layers.l3 import persona_doc
from memstrata.models import (
    Atom,
    AtomFilter,
    AtomType,
    Counts,
    Layer,
    Message,
    MessageFilter,
    Persona,
    Scene,
    Tenant,
)
from memstrata.ports import Store, UpperLayers
from memstrata.retrieval.documents import atom_body
from memstrata.retrieval.vectors import VectorState

log = logging.getLogger(__name__)
_MAX_CHAIN = 10_000  # versions followed from a superseded atom to the current one


@dataclass(frozen=True, slots=True)
class Removal:
    """What a delete removed: message ids, atom ids (every version) and the scenes that held atoms."""

    messages: tuple[str, ...] = ()
    atoms: tuple[str, ...] = ()
    scenes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AtomChange:
    """The fields an update may change; None keeps the current value."""

    content: str | None = None
    type: AtomType | None = None
    priority: int | None = None
    scene_name: str | None = None


class RecordEdits:
    """Record-level reads and edits over a store and (when present) the scene and persona files."""

    def __init__(
        self, store: Store, upper: UpperLayers | None, vectors: VectorState, now: Callable[[], int]
    ) -> None:
        self._store = store
        self._upper = upper
        self._vectors = vectors
        self._now = now

    # --- L0 -------------------------------------------------------------------------------------

    def message(self, tenant: Tenant, message_id: str) -> Message:
        found = self._store.messages.get(tenant, [message_id])
        if not found:
            raise NotFoundError("message", message_id, tenant=str(tenant))
        return found[0]

    def delete_messages(self, tenant: Tenant, ids: list[str], session_keys: list[str]) -> Removal:
        """Delete messages (by id and whole sessions) with their index rows and vectors, and the
        atoms left with no source (every source deleted; one swept by retention still counts)."""
        removed = self._store.messages.delete(tenant, ids, session_keys)
        self._store.index.drop_vectors(tenant, Layer.L0, [m.seq for m in removed])
        gone = [m.id for m in removed]
        atoms = (
            self.delete_atoms(tenant, dependants.orphaned(self._store, tenant, gone)) if gone else Removal()
        )
        return Removal(tuple(gone), atoms.atoms, atoms.scenes)

    # --- L1 -------------------------------------------------------------------------------------

    def atom(self, tenant: Tenant, atom_id: str) -> Atom:
        found = self._store.atoms.get(tenant, [atom_id])
        if not found:
            raise NotFoundError("atom", atom_id, tenant=str(tenant))
        return found[0]

    def update_atom(self, tenant: Tenant, atom_id: str, change: AtomChange, *, follow: bool) -> Atom:
        """Write a new version of the atom (new id, version + 1) that supersedes it; an update that
        changes nothing returns the atom as it is. A superseded atom is a ``ConflictError`` (naming
        the current version), unless ``follow``: then the current version is updated."""
        old = self._current(tenant, self.atom(tenant, atom_id), follow=follow)
        new = _apply(old, change, self._now())
        if (new.content, new.type, new.priority, new.scene_name) == (
            old.content,
            old.type,
            old.priority,
            old.scene_name,
        ):
            return old
        stored = self._store.atoms.commit(tenant, [(new, atom_body(new))], {old.id: new.id}, None)
        self._vectors.embed_atoms(tenant, stored)  # a failure is left to the embedding backlog
        return stored[0] if stored else new

    def _current(self, tenant: Tenant, atom: Atom, *, follow: bool) -> Atom:
        if atom.superseded_by is None:
            return atom
        if not follow:
            raise ConflictError(
                f"atom {atom.id!r} was superseded by {atom.superseded_by!r}: update the current version",
                current=atom.superseded_by,
                tenant=str(tenant),
            )
        following: str | None = atom.superseded_by
        for _ in range(_MAX_CHAIN):
            if following is None:
                break
            atom = self.atom(tenant, following)
            following = atom.superseded_by
        if following is not None:
            raise ConflictError(f"atom {atom.id!r} has no current version", tenant=str(tenant))
        return atom

    def delete_atoms(self, tenant: Tenant, ids: list[str]) -> Removal:
        """Delete atoms (with their older versions), their vectors and their scene membership; the
        scene index follows now, the scenes' text at the next L2 run."""
        if not ids:
            return Removal()
        dropped = dependants.drop_atoms(self._store, tenant, ids)
        if dropped.scenes and self._upper is not None:
            self._rebuild_index(self._upper, tenant)
        return Removal((), tuple(a.id for a in dropped.atoms), dropped.scenes)

    def pin_atom(self, tenant: Tenant, atom_id: str, pinned: bool) -> Atom:
        """Pin (or unpin) the current atom in place: a pinned atom is never swept, expired, merged
        away or superseded by the pipeline. A superseded atom is a ``ConflictError``."""
        atom = self._current(tenant, self.atom(tenant, atom_id), follow=False)
        return self._amend(tenant, replace(atom, pinned=pinned))

    def set_ttl(self, tenant: Tenant, atom_id: str, expires_at: int | None) -> Atom:
        """Give the current atom a time to live (``expires_at``, ms) or none (None), in place."""
        atom = self._current(tenant, self.atom(tenant, atom_id), follow=False)
        return self._amend(tenant, replace(atom, expires_at=expires_at))

    def _amend(self, tenant: Tenant, atom: Atom) -> Atom:
        found = self._store.atoms.amend(tenant, [atom])
        if not found:
            raise NotFoundError("atom", atom.id, tenant=str(tenant))
        return found[0]

    # --- L2 -------------------------------------------------------------------------------------

    def write_scene(
        self, tenant: Tenant, path: str, content: str, summary: str | None, *, create: bool
    ) -> Scene:
        """Create or replace ``scene_blocks/<name>.md``. ``content`` is the Markdown body, or a
        whole scene file (its META summary is used when ``summary`` is None). The pipeline keeps
        ``created`` and ``heat``; ``updated`` is now. A replaced scene is backed up first."""
        upper = self._need_upper(path)
        name = scene_names.from_path(path)
        meta, body = split_meta(content)
        if not body.strip():
            raise InputError("a scene needs a body (delete the scene instead)", item="content")
        if summary is None and meta is not None:
            summary = meta.get("summary")
        old = next((s for s in upper.scenes.load(tenant) if s.name == name), None)
        if old is None and not create:
            raise NotFoundError("scene", path, tenant=str(tenant))
        if old is not None:
            upper.scenes.backup(tenant)  # the version it replaces stays readable (scene_backups)
        now = self._now()
        scene = Scene(
            name=name,
            summary=one_line(summary) if summary is not None else (old.summary if old else ""),
            heat=old.heat if old else 0,
            created=old.created if old else now,
            updated=now,
            body=body.strip("\n"),
        )
        upper.scenes.save(tenant, scene)
        self._rebuild_index(upper, tenant)
        return scene

    def delete_scene(self, tenant: Tenant, path: str) -> bool:
        """Delete a scene file; its atoms leave the scene (they stay, unplaced, until an edit or
        a new L2 consolidation places them)."""
        upper = self._need_upper(path)
        name = scene_names.from_path(path)
        if any(s.name == name for s in upper.scenes.load(tenant)):
            upper.scenes.backup(tenant)  # a deleted scene stays readable in its backups
        removed = upper.scenes.remove(tenant, name)
        membership = self._store.members.get(tenant)
        if name in membership.values():
            self._store.members.replace(tenant, {i: n for i, n in membership.items() if n != name})
        self._rebuild_index(upper, tenant)
        return removed

    def _rebuild_index(self, upper: UpperLayers, tenant: Tenant) -> None:
        """The scene index from the scene files and the stored membership (as L2 leaves it), and
        the persona's navigation after it."""
        membership = self._store.members.get(tenant)
        seqs = {a.id: a.seq for a in self._store.atoms.get(tenant, list(membership))}
        entries = scene_index.rebuild(upper.scenes.load(tenant), membership, seqs)
        upper.scenes.save_index(tenant, entries)
        persona_doc.refresh_navigation(upper, tenant, entries)

    # --- L3 -------------------------------------------------------------------------------------

    def write_persona(self, tenant: Tenant, body: str) -> Persona:
        """Replace the persona body (any scene navigation in ``body`` is dropped and regenerated).
        The next L3 run rewrites the persona from the scenes, as it would an L3-written one."""
        upper = self._need_upper("persona.md")
        clean = persona_doc.strip_navigation(body)
        if not clean.strip():
            raise InputError("the persona body is empty", item="body")
        upper.persona.backup(tenant)  # the persona it replaces stays readable (persona_backups)
        upper.persona.write(tenant, persona_doc.compose(clean, upper.scenes.index(tenant)))
        found = upper.persona.read(tenant)
        text, updated = found if found is not None else ("", self._now())
        persona_body, navigation = persona_doc.split(text)
        return Persona(tenant, persona_body, navigation, updated)

    # --- counts ---------------------------------------------------------------------------------

    def counts(
        self,
        tenant: Tenant,
        messages: MessageFilter,
        atoms: AtomFilter,
        scene_prefix: str | None,
    ) -> Counts:
        scenes = self._upper.scenes.index(tenant) if self._upper is not None else []
        prefix = (scene_prefix or "").removeprefix(scene_names.FOLDER + "/")
        has_persona = self._upper is not None and self._upper.persona.read(tenant) is not None
        return Counts(
            messages=self._store.messages.tally(tenant, messages),
            atoms=self._store.atoms.tally(tenant, atoms),
            scenes=sum(1 for e in scenes if e.name.startswith(prefix)),
            persona=int(has_persona),
        )

    def _need_upper(self, path: str) -> UpperLayers:
        if self._upper is None:
            raise PathError("this memory has no scene or persona files", path=path)
        return self._upper


def _apply(old: Atom, change: AtomChange, now: int) -> Atom:
    content = old.content if change.content is None else change.content.strip()
    if not content:
        raise InputError("an atom's content must not be empty", item="content")
    priority = old.priority if change.priority is None else change.priority
    if not (priority == -1 or 0 <= priority <= 100):
        raise InputError("priority is 0-100, or -1 for a strict global instruction", item="priority")
    return replace(
        old,
        id=uuid.uuid4().hex,
        type=change.type or old.type,
        content=content,
        priority=priority,
        scene_name=old.scene_name if change.scene_name is None else change.scene_name.strip(),
        metadata={**old.metadata, "edited_from": old.id},
        updated_at=now,
        version=old.version + 1,
        superseded_by=None,
        seq=0,
    )
