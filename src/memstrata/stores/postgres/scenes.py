"""``PostgresSceneStore``: the ``SceneStore`` of the PostgreSQL backend. Scene documents are rows
(the text as written, with its META fields read from it), the index is rows, and backups are
snapshot rows, pruned to a count. Writers see a tenant's scenes through ``SceneRows`` (a ``Folder``).

As on disk, reads never write: a document that is unreadable (only a hand edit of the table can
make one: every write drops control characters) is left out and recorded; ``repair`` sets it
aside (table ``set_aside``) and restores the newest readable copy from the snapshots.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Sequence

import psycopg

from memstrata.errors import StoreError
from memstrata.layers.folder import check_name, clean_text
from memstrata.layers.l2 import index as scene_index
from memstrata.layers.l2 import names
from memstrata.layers.l2.names import FOLDER
from memstrata.layers.l2.scene_file import is_soft_deleted, parse_scene, render_scene, scene_problem
from memstrata.models import Backup, FileProblem, Scene, SceneEntry, Tenant
from memstrata.stores.files.health import ProblemLog
from memstrata.stores.postgres.backups import as_backups, now_ms, number_of, prune, set_aside, snapshot_row
from memstrata.stores.postgres.db import Database, Row

log = logging.getLogger(__name__)
PREFIX = "scenes-"
_UPSERT = (
    "INSERT INTO scenes (user_id, agent_id, name, text, summary, heat, created, updated, written_at) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (user_id, agent_id, name) DO UPDATE SET "
    "text = excluded.text, summary = excluded.summary, heat = excluded.heat, created = excluded.created, "
    "updated = excluded.updated, written_at = excluded.written_at"
)


def upsert_scene(c: psycopg.Connection[Row], tenant: Tenant, name: str, text: str) -> None:
    """Write one scene row: ``text`` as given, its META fields when it is a readable scene."""
    now = now_ms()
    meta: tuple[object, ...] = (None, None, None, None)
    if scene_problem(text.encode("utf-8")) is None:
        s = parse_scene(name, text, now)
        meta = (s.summary, s.heat, s.created, s.updated)
    c.execute(_UPSERT, (tenant.user_id, tenant.agent_id, name, text, *meta, now))


class SceneRows:
    """A tenant's scene documents as a ``Folder``."""

    def __init__(self, db: Database, tenant: Tenant) -> None:
        self._db = db
        self._tenant = tenant

    def names(self) -> list[str]:
        t = self._tenant
        found = self._db.query(
            "SELECT name FROM scenes WHERE user_id = %s AND agent_id = %s ORDER BY name",
            (t.user_id, t.agent_id),
        )
        return [r["name"] for r in found]

    def read(self, name: str) -> str | None:
        t = self._tenant
        found = self._db.query(
            "SELECT text FROM scenes WHERE user_id = %s AND agent_id = %s AND name = %s",
            (t.user_id, t.agent_id, check_name(name)),
        )
        return str(found[0]["text"]) if found else None

    def write(self, name: str, text: str) -> None:
        checked, clean = check_name(name), clean_text(text)
        with self._db.tx() as c:
            upsert_scene(c, self._tenant, checked, clean)


class PostgresSceneStore:
    """Scene rows, index rows and scene snapshots (``keep`` per tenant) of every tenant."""

    def __init__(self, db: Database, *, keep: int = 10) -> None:
        self._db = db
        self._keep = keep
        self._log = ProblemLog()

    def folder(self, tenant: Tenant) -> SceneRows:
        return SceneRows(self._db, tenant)

    def _rows(self, tenant: Tenant) -> list[Row]:
        return self._db.query(
            "SELECT name, text, written_at FROM scenes WHERE user_id = %s AND agent_id = %s ORDER BY name",
            (tenant.user_id, tenant.agent_id),
        )

    def load(self, tenant: Tenant) -> list[Scene]:
        scenes = []
        found = self._rows(tenant)
        for r in found:
            path = f"{FOLDER}/{r['name']}"
            problem = scene_problem(r["text"].encode("utf-8"))
            if problem is None:
                self._log.fine(tenant, path)
                scenes.append(parse_scene(r["name"], r["text"], r["written_at"]))
            elif self._log.found(FileProblem(tenant, path, problem)):  # once, not at every read
                log.warning("%s: %s is unreadable (%s); left out", tenant, path, problem)
        self._log.only(tenant, f"{FOLDER}/", [f"{FOLDER}/{r['name']}" for r in found])
        return scenes

    def save(self, tenant: Tenant, scene: Scene) -> None:
        if names.normalise(scene.name) != scene.name:
            raise StoreError(f"not a normalised scene file name: {scene.name!r}")
        path = f"{FOLDER}/{scene.name}"
        with self._db.tx() as c:
            if any(p.path == path for p in self._log.of(tenant)):
                set_aside(c, tenant, path, "scenes", scene.name, "unreadable before it was replaced")
            upsert_scene(c, tenant, scene.name, render_scene(scene))
        self._log.fine(tenant, path)

    def remove(self, tenant: Tenant, name: str) -> bool:
        if names.normalise(name) != name:
            raise StoreError(f"not a normalised scene file name: {name!r}")
        with self._db.tx() as c:
            gone = c.execute(
                "DELETE FROM scenes WHERE user_id = %s AND agent_id = %s AND name = %s RETURNING name",
                (tenant.user_id, tenant.agent_id, name),
            ).fetchall()
        return bool(gone)

    def tidy(self, tenant: Tenant) -> dict[str, str | None]:
        changes: dict[str, str | None] = {}
        with self._db.tx() as c:
            found = c.execute(
                "SELECT name, text FROM scenes WHERE user_id = %s AND agent_id = %s ORDER BY name FOR UPDATE",
                (tenant.user_id, tenant.agent_id),
            ).fetchall()
            kept = {}
            for r in found:
                if scene_problem(r["text"].encode("utf-8")) is None and is_soft_deleted(r["text"]):
                    changes[r["name"]] = None
                else:
                    kept[r["name"]] = r["text"]
            moving = {old: new for old, new in names.assign(list(kept)).items() if old != new}
            gone = [n for n, new in changes.items() if new is None] + list(moving)
            c.execute(
                "DELETE FROM scenes WHERE user_id = %s AND agent_id = %s AND name = ANY(%s)",
                (tenant.user_id, tenant.agent_id, gone),
            )
            for old, new in moving.items():
                upsert_scene(c, tenant, new, kept[old])
                changes[old] = new
        if changes:
            log.info("scene cleanup for %s: %s", tenant, changes)
        return changes

    def index(self, tenant: Tenant) -> list[SceneEntry]:
        found = self._db.query(
            "SELECT name, summary, heat, created, updated, atom_ids FROM scene_index "
            "WHERE user_id = %s AND agent_id = %s ORDER BY pos",
            (tenant.user_id, tenant.agent_id),
        )
        return [
            SceneEntry(r["name"], r["summary"], r["heat"], r["created"], r["updated"], tuple(r["atom_ids"]))
            for r in found
        ]

    def save_index(self, tenant: Tenant, entries: Sequence[SceneEntry]) -> None:
        with self._db.tx() as c:
            _replace_index(c, tenant, entries)

    def backup(self, tenant: Tenant) -> str:
        self.repair(tenant)
        entries = self.index(tenant)
        with self._db.tx() as c:
            docs = {r["name"]: r["text"] for r in self._rows(tenant)}
            n = c.execute(
                "INSERT INTO scene_snapshots (user_id, agent_id, made_at, scenes, index) "
                "VALUES (%s, %s, %s, %s, %s) RETURNING n",
                (
                    tenant.user_id,
                    tenant.agent_id,
                    now_ms(),
                    json.dumps(docs),
                    scene_index.to_json(entries) if entries else None,
                ),
            ).fetchone()
            prune(c, "scene_snapshots", tenant, self._keep)
        assert n is not None
        return f"{PREFIX}{n['n']}"

    def restore(self, tenant: Tenant, snapshot: str) -> None:
        with self._db.tx() as c:
            found = snapshot_row(c, "scene_snapshots", "scenes, index", tenant, snapshot, PREFIX)
            saved: dict[str, str] = found["scenes"]
            current = {
                r["name"]: r["text"]
                for r in c.execute(
                    "SELECT name, text FROM scenes WHERE user_id = %s AND agent_id = %s FOR UPDATE",
                    (tenant.user_id, tenant.agent_id),
                ).fetchall()
            }
            c.execute(
                "DELETE FROM scenes WHERE user_id = %s AND agent_id = %s AND NOT (name = ANY(%s))",
                (tenant.user_id, tenant.agent_id, list(saved)),
            )
            for name, text in saved.items():
                if current.get(name) != text:
                    upsert_scene(c, tenant, name, text)
            entries = scene_index.from_json(found["index"]) if found["index"] else []
            _replace_index(c, tenant, entries)

    def backups(self, tenant: Tenant, name: str) -> list[Backup]:
        _normal(name)
        found = self._db.query(
            "SELECT n, made_at FROM scene_snapshots WHERE user_id = %s AND agent_id = %s AND scenes ? %s "
            "ORDER BY n DESC",
            (tenant.user_id, tenant.agent_id, name),
        )
        return as_backups(found, PREFIX)

    def read_backup(self, tenant: Tenant, snapshot: str, name: str) -> str | None:
        _normal(name)
        number = number_of(snapshot, PREFIX)
        if number is None:
            return None
        found = self._db.query(
            "SELECT scenes ->> %s AS text FROM scene_snapshots WHERE n = %s AND user_id = %s AND agent_id = %s",
            (name, number, tenant.user_id, tenant.agent_id),
        )
        return str(found[0]["text"]) if found and found[0]["text"] is not None else None

    def tenants(self) -> list[Tenant]:
        found = self._db.query(
            "SELECT user_id, agent_id FROM scenes UNION SELECT user_id, agent_id FROM scene_index "
            "UNION SELECT user_id, agent_id FROM persona ORDER BY user_id, agent_id"
        )
        return [Tenant(r["user_id"], r["agent_id"]) for r in found]

    def problems(self, tenant: Tenant) -> list[FileProblem]:
        return self._log.of(tenant)

    def check(self, tenant: Tenant) -> list[FileProblem]:
        self.load(tenant)
        with contextlib.suppress(StoreError):
            self.index(tenant)
        return self.problems(tenant)

    def repair(self, tenant: Tenant) -> list[FileProblem]:
        done = []
        for r in self._rows(tenant):
            problem = scene_problem(r["text"].encode("utf-8"))
            if problem is None:
                continue
            path = f"{FOLDER}/{r['name']}"
            with self._db.tx() as c:
                kept_as = set_aside(c, tenant, path, "scenes", r["name"], problem)
                source = self._restore_one(c, tenant, r["name"])
            found = FileProblem(tenant, path, problem, kept_as, source)
            log.warning("%s", found)
            self._log.fine(tenant, path)
            done.append(found)
        return done

    def erase(self, tenant: Tenant) -> int:
        """Every scene row, index row, scene snapshot and set-aside document of the tenant."""
        removed = 0
        with self._db.tx() as c:
            for table in ("scenes", "scene_index", "scene_snapshots", "set_aside"):
                found = c.execute(
                    f"DELETE FROM {table} WHERE user_id = %s AND agent_id = %s",
                    (tenant.user_id, tenant.agent_id),
                )
                removed += found.rowcount
        self._log.drop(tenant)
        return removed

    def _restore_one(self, c: psycopg.Connection[Row], tenant: Tenant, name: str) -> str | None:
        """Put back the newest readable copy of scene ``name`` from the snapshots; its snapshot id."""
        for r in c.execute(
            "SELECT n, scenes ->> %s AS text FROM scene_snapshots WHERE user_id = %s AND agent_id = %s "
            "AND scenes ? %s ORDER BY n DESC",
            (name, tenant.user_id, tenant.agent_id, name),
        ).fetchall():
            if scene_problem(r["text"].encode("utf-8")) is None:
                upsert_scene(c, tenant, name, r["text"])
                return f"{PREFIX}{r['n']}"
        return None


def _normal(name: str) -> None:
    if names.normalise(name) != name:
        raise StoreError(f"not a normalised scene file name: {name!r}")


def _replace_index(c: psycopg.Connection[Row], tenant: Tenant, entries: Sequence[SceneEntry]) -> None:
    c.execute(
        "DELETE FROM scene_index WHERE user_id = %s AND agent_id = %s", (tenant.user_id, tenant.agent_id)
    )
    for pos, e in enumerate(entries):
        c.execute(
            "INSERT INTO scene_index (user_id, agent_id, pos, name, summary, heat, created, updated, atom_ids) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                tenant.user_id,
                tenant.agent_id,
                pos,
                e.name,
                e.summary,
                e.heat,
                e.created,
                e.updated,
                json.dumps(list(e.atom_ids)),
            ),
        )
