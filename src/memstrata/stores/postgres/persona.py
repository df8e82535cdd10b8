"""``PostgresPersonaStore``: the ``PersonaStore`` of the PostgreSQL backend. The persona is one row
per tenant, its backups are snapshot rows pruned to a count; a persona writer sees it through
``PersonaRows`` (a ``Folder`` holding ``persona.md`` alone)."""

from __future__ import annotations

import logging

from memstrata.layers.folder import check_name, clean_text
from memstrata.layers.l2.scene_file import strip_controls, text_problem
from memstrata.layers.l3.persona_doc import FILE
from memstrata.models import Backup, FileProblem, Tenant
from memstrata.stores.files.health import ProblemLog
from memstrata.stores.postgres.backups import as_backups, now_ms, number_of, prune, set_aside, snapshot_row
from memstrata.stores.postgres.db import Database, Row

log = logging.getLogger(__name__)
PREFIX = "persona-"
_UPSERT = (
    "INSERT INTO persona (user_id, agent_id, text, written_at) VALUES (%s, %s, %s, %s) "
    "ON CONFLICT (user_id, agent_id) DO UPDATE SET text = excluded.text, written_at = excluded.written_at"
)


class PersonaRows:
    """A tenant's persona as a ``Folder`` holding ``persona.md`` alone."""

    def __init__(self, db: Database, tenant: Tenant) -> None:
        self._db = db
        self._tenant = tenant

    def names(self) -> list[str]:
        return [FILE] if self.read(FILE) is not None else []

    def read(self, name: str) -> str | None:
        check_name(name, FILE)
        t = self._tenant
        found = self._db.query(
            "SELECT text FROM persona WHERE user_id = %s AND agent_id = %s", (t.user_id, t.agent_id)
        )
        return str(found[0]["text"]) if found else None

    def write(self, name: str, text: str) -> None:
        check_name(name, FILE)
        t = self._tenant
        with self._db.tx() as c:
            c.execute(_UPSERT, (t.user_id, t.agent_id, clean_text(text), now_ms()))


class PostgresPersonaStore:
    """The persona row of every tenant, with ``keep`` snapshots each."""

    def __init__(self, db: Database, *, keep: int = 3) -> None:
        self._db = db
        self._keep = keep
        self._log = ProblemLog()

    def folder(self, tenant: Tenant) -> PersonaRows:
        return PersonaRows(self._db, tenant)

    def _row(self, tenant: Tenant) -> Row | None:
        found = self._db.query(
            "SELECT text, written_at FROM persona WHERE user_id = %s AND agent_id = %s",
            (tenant.user_id, tenant.agent_id),
        )
        return found[0] if found else None

    def read(self, tenant: Tenant) -> tuple[str, int] | None:
        row = self._row(tenant)
        if row is None:
            self._log.fine(tenant, FILE)
            return None
        problem = text_problem(row["text"].encode("utf-8"))
        if problem is not None:
            if self._log.found(FileProblem(tenant, FILE, problem)):  # once, not at every read
                log.warning("%s; left out", FileProblem(tenant, FILE, problem))
            return None
        self._log.fine(tenant, FILE)
        return row["text"], int(row["written_at"])

    def write(self, tenant: Tenant, text: str) -> None:
        with self._db.tx() as c:
            if self._log.of(tenant):
                set_aside(c, tenant, FILE, "persona", FILE, "unreadable before it was replaced")
            c.execute(_UPSERT, (tenant.user_id, tenant.agent_id, strip_controls(text), now_ms()))
        self._log.fine(tenant, FILE)

    def backup(self, tenant: Tenant) -> str | None:
        self.repair(tenant)
        with self._db.tx() as c:
            found = c.execute(
                "INSERT INTO persona_snapshots (user_id, agent_id, made_at, text) "
                "SELECT user_id, agent_id, %s, text FROM persona WHERE user_id = %s AND agent_id = %s RETURNING n",
                (now_ms(), tenant.user_id, tenant.agent_id),
            ).fetchone()
            prune(c, "persona_snapshots", tenant, self._keep)
        return f"{PREFIX}{found['n']}" if found else None

    def restore(self, tenant: Tenant, snapshot: str | None) -> None:
        with self._db.tx() as c:
            if snapshot is None:
                c.execute(
                    "DELETE FROM persona WHERE user_id = %s AND agent_id = %s",
                    (tenant.user_id, tenant.agent_id),
                )
                return
            found = snapshot_row(c, "persona_snapshots", "text", tenant, snapshot, PREFIX)
            c.execute(_UPSERT, (tenant.user_id, tenant.agent_id, found["text"], now_ms()))

    def backups(self, tenant: Tenant) -> list[Backup]:
        found = self._db.query(
            "SELECT n, made_at FROM persona_snapshots WHERE user_id = %s AND agent_id = %s ORDER BY n DESC",
            (tenant.user_id, tenant.agent_id),
        )
        return as_backups(found, PREFIX)

    def read_backup(self, tenant: Tenant, snapshot: str) -> str | None:
        number = number_of(snapshot, PREFIX)
        found = (
            self._db.query(
                "SELECT text FROM persona_snapshots WHERE n = %s AND user_id = %s AND agent_id = %s",
                (number, tenant.user_id, tenant.agent_id),
            )
            if number is not None
            else []
        )
        return str(found[0]["text"]) if found else None

    def erase(self, tenant: Tenant) -> int:
        """The persona row, its snapshots and its set-aside copies."""
        who = (tenant.user_id, tenant.agent_id)
        with self._db.tx() as c:
            removed = c.execute("DELETE FROM persona WHERE user_id = %s AND agent_id = %s", who).rowcount
            removed += c.execute(
                "DELETE FROM persona_snapshots WHERE user_id = %s AND agent_id = %s", who
            ).rowcount
            removed += c.execute(
                "DELETE FROM set_aside WHERE user_id = %s AND agent_id = %s AND path = %s", (*who, FILE)
            ).rowcount
        self._log.drop(tenant)
        return removed

    def problems(self, tenant: Tenant) -> list[FileProblem]:
        return self._log.of(tenant)

    def check(self, tenant: Tenant) -> list[FileProblem]:
        self.read(tenant)
        return self.problems(tenant)

    def repair(self, tenant: Tenant) -> list[FileProblem]:
        row = self._row(tenant)
        problem = text_problem(row["text"].encode("utf-8")) if row is not None else None
        if problem is None:
            return []
        with self._db.tx() as c:
            kept_as = set_aside(c, tenant, FILE, "persona", FILE, problem)
            source = None
            for r in c.execute(
                "SELECT n, text FROM persona_snapshots WHERE user_id = %s AND agent_id = %s ORDER BY n DESC",
                (tenant.user_id, tenant.agent_id),
            ).fetchall():
                if text_problem(r["text"].encode("utf-8")) is None:
                    c.execute(_UPSERT, (tenant.user_id, tenant.agent_id, r["text"], now_ms()))
                    source = f"{PREFIX}{r['n']}"
                    break
        found = FileProblem(tenant, FILE, problem, kept_as, source)
        log.warning("%s", found)
        self._log.fine(tenant, FILE)
        return [found]
