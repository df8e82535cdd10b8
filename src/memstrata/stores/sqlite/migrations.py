"""Schema history of the embedded store, as named migrations applied in order.

Each migration runs once, inside a transaction, and is recorded in ``_migrations``. Never edit a
migration that has shipped: add a new one.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from memstrata.errors import SchemaError

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_messages(db: sqlite3.Connection) -> None:
    """L0: the message log. ``seq`` is the cursor; ids are unique per tenant (idempotent capture)."""
    _ddl(
        db,
        """
        CREATE TABLE messages (
            seq          INTEGER PRIMARY KEY AUTOINCREMENT,
            id           TEXT NOT NULL,
            user_id      TEXT NOT NULL,
            agent_id     TEXT NOT NULL,
            session_key  TEXT NOT NULL,
            session_id   TEXT NOT NULL,
            role         TEXT NOT NULL,
            name         TEXT,
            content      TEXT NOT NULL,
            timestamp    INTEGER NOT NULL,
            recorded_at  INTEGER NOT NULL,
            UNIQUE (user_id, agent_id, id)
        );
        CREATE INDEX messages_session ON messages (user_id, agent_id, session_key, seq);
        CREATE INDEX messages_time ON messages (user_id, agent_id, timestamp);
        """,
    )


@migration
def m002_atoms(db: sqlite3.Connection) -> None:
    """L1: memory atoms. A correction inserts a new row and points the old one's ``superseded_by`` at it."""
    _ddl(
        db,
        """
        CREATE TABLE atoms (
            seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
            id                  TEXT NOT NULL,
            user_id             TEXT NOT NULL,
            agent_id            TEXT NOT NULL,
            session_key         TEXT NOT NULL,
            type                TEXT NOT NULL,
            priority            INTEGER NOT NULL,
            content             TEXT NOT NULL,
            scene_name          TEXT NOT NULL,
            source_message_ids  TEXT NOT NULL,
            metadata            TEXT NOT NULL,
            event_time          INTEGER NOT NULL,
            created_at          INTEGER NOT NULL,
            updated_at          INTEGER NOT NULL,
            version             INTEGER NOT NULL,
            superseded_by       TEXT,
            UNIQUE (user_id, agent_id, id)
        );
        CREATE INDEX atoms_tenant ON atoms (user_id, agent_id, superseded_by, seq);
        """,
    )


@migration
def m003_fts(db: sqlite3.Connection) -> None:
    """Keyword indexes: FTS5 with Porter stemming over unicode61 (diacritics removed).

    The indexed ``body`` is not the stored content: it carries context (speaker names, the previous
    turn, dates) that helps matching, while a hit returns only the record itself.
    """
    _ddl(
        db,
        """
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            body, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE atoms_fts USING fts5(
            body, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        """,
    )


@migration
def m004_vectors(db: sqlite3.Connection) -> None:
    """Vectors: normalised float32 blobs, one per record and layer; ``body`` is what was embedded."""
    _ddl(
        db,
        """
        CREATE TABLE vectors (
            layer     TEXT NOT NULL,
            seq       INTEGER NOT NULL,
            user_id   TEXT NOT NULL,
            agent_id  TEXT NOT NULL,
            vec       BLOB NOT NULL,
            PRIMARY KEY (layer, seq)
        );
        CREATE INDEX vectors_tenant ON vectors (user_id, agent_id, layer, seq);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """,
    )


@migration
def m005_pipeline(db: sqlite3.Connection) -> None:
    """Durable L1 scheduler state per session: cursor, pending turns, timers, failures."""
    _ddl(
        db,
        """
        CREATE TABLE pipeline_sessions (
            user_id        TEXT NOT NULL,
            agent_id       TEXT NOT NULL,
            session_key    TEXT NOT NULL,
            cursor         INTEGER NOT NULL DEFAULT 0,
            pending        INTEGER NOT NULL DEFAULT 0,
            runs           INTEGER NOT NULL DEFAULT 0,
            fire_at        INTEGER,
            attempts       INTEGER NOT NULL DEFAULT 0,
            last_error     TEXT,
            last_activity  INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (user_id, agent_id, session_key)
        );
        """,
    )


@migration
def m006_tenant_pipeline(db: sqlite3.Connection) -> None:
    """Durable L2/L3 scheduler state per tenant: the L2 cursor and timer, L3 request counters,
    failures, and the backup of a run in progress (restored after a crash)."""
    _ddl(
        db,
        """
        CREATE TABLE pipeline_tenants (
            user_id       TEXT NOT NULL,
            agent_id      TEXT NOT NULL,
            l2_cursor     INTEGER NOT NULL DEFAULT 0,
            l2_fire_at    INTEGER,
            last_l2       INTEGER,
            last_active   INTEGER NOT NULL DEFAULT 0,
            l2_attempts   INTEGER NOT NULL DEFAULT 0,
            l2_error      TEXT,
            l2_snapshot   TEXT,
            new_atoms     INTEGER NOT NULL DEFAULT 0,
            l3_requested  INTEGER NOT NULL DEFAULT 0,
            l3_done       INTEGER NOT NULL DEFAULT 0,
            l3_reasons    TEXT NOT NULL DEFAULT '[]',
            l3_fire_at    INTEGER,
            l3_attempts   INTEGER NOT NULL DEFAULT 0,
            l3_error      TEXT,
            last_l3       INTEGER,
            l3_running    INTEGER NOT NULL DEFAULT 0,
            l3_snapshot   TEXT,
            PRIMARY KEY (user_id, agent_id)
        );
        """,
    )


@migration
def m007_scene_members(db: sqlite3.Connection) -> None:
    """L2: which scene file holds each consolidated atom (the source of truth; the scene index file
    is rebuilt from it and the scene files)."""
    _ddl(
        db,
        """
        CREATE TABLE scene_members (
            user_id   TEXT NOT NULL,
            agent_id  TEXT NOT NULL,
            atom_id   TEXT NOT NULL,
            scene     TEXT NOT NULL,
            PRIMARY KEY (user_id, agent_id, atom_id)
        );
        """,
    )


@migration
def m008_forgetting(db: sqlite3.Connection) -> None:
    """Forgetting on purpose: an atom's ``pinned`` flag and ``expires_at`` time (ms; NULL: no time
    to live), the L2/L3 marks that make the next runs rewrite scenes and the persona without
    removed atoms, and the state of the daily retention sweep (one row)."""
    _ddl(
        db,
        """
        ALTER TABLE atoms ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE atoms ADD COLUMN expires_at INTEGER;
        CREATE INDEX atoms_expiry ON atoms (expires_at) WHERE expires_at IS NOT NULL;
        CREATE INDEX atoms_updated ON atoms (updated_at);
        ALTER TABLE pipeline_tenants ADD COLUMN l2_rewrite TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE pipeline_tenants ADD COLUMN l2_rebuild INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE pipeline_tenants ADD COLUMN l3_fresh INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE pipeline_sweep (
            id           INTEGER PRIMARY KEY CHECK (id = 1),
            last_run     INTEGER,
            attempts     INTEGER NOT NULL DEFAULT 0,
            last_error   TEXT,
            retry_at     INTEGER,
            last_report  TEXT
        );
        """,
    )


@migration
def m009_api_keys(db: sqlite3.Connection) -> None:
    """Scoped API keys: a digest of each key (never the key), its label, the tenants it reaches
    (a JSON list of ``[user, agent or null]``), when it was created and revoked (ms)."""
    _ddl(
        db,
        """
        CREATE TABLE api_keys (
            id          TEXT PRIMARY KEY,
            digest      TEXT NOT NULL UNIQUE,
            label       TEXT NOT NULL,
            tenants     TEXT NOT NULL,
            created_at  INTEGER NOT NULL,
            revoked_at  INTEGER
        );
        """,
    )


@migration
def m010_message_metadata(db: sqlite3.Connection) -> None:
    """L0: each message's custom metadata, a JSON object (``{}`` for messages stored before);
    metadata filters read it with ``json_extract`` inside the listing and search queries."""
    _ddl(db, "ALTER TABLE messages ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}'")


@migration
def m011_armed_sessions(db: sqlite3.Connection) -> None:
    """The sessions whose L1 timer is set, found without reading every session the store ever
    held (the scheduler asks after every capture)."""
    _ddl(db, "CREATE INDEX pipeline_sessions_armed ON pipeline_sessions (fire_at) WHERE fire_at IS NOT NULL")


@migration
def m012_index_version(db: sqlite3.Connection) -> None:
    """The version of the texts the index was built from (``retrieval/reindex.py``): 1 for a store
    that holds messages already (``memstrata reindex`` brings it to the current one), 2 for a new one."""
    _ddl(
        db,
        """
        INSERT OR IGNORE INTO meta (key, value)
            SELECT 'index_version', CASE WHEN EXISTS (SELECT 1 FROM messages) THEN '1' ELSE '2' END
        """,
    )


@migration
def m013_index_version_3(db: sqlite3.Connection) -> None:
    """Index version 3 (``retrieval/reindex.py``: short messages keep a longer previous turn) for a
    store that holds no messages yet; one that does keeps its version, so ``status`` asks for
    ``memstrata reindex``."""
    _ddl(
        db, "UPDATE meta SET value = '3' WHERE key = 'index_version' AND NOT EXISTS (SELECT 1 FROM messages)"
    )


@migration
def m014_index_version_4(db: sqlite3.Connection) -> None:
    """Index version 4 (``retrieval/reindex.py``: an assistant's message is embedded from its first
    words) for a store that holds no messages yet; one that does keeps its version, so ``status``
    asks for ``memstrata reindex``."""
    _ddl(
        db, "UPDATE meta SET value = '4' WHERE key = 'index_version' AND NOT EXISTS (SELECT 1 FROM messages)"
    )


def _ddl(db: sqlite3.Connection, script: str) -> None:
    # One execute per statement: executescript() would commit the surrounding transaction.
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def check(db: sqlite3.Connection) -> None:
    """For a read-only open: raise ``SchemaError`` unless every migration is applied (and no unknown
    one is); nothing is written."""
    found = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'")
    done = {row[0] for row in db.execute("SELECT name FROM _migrations")} if found.fetchone() else set()
    known = {m.__name__ for m in MIGRATIONS}
    if unknown := done - known:
        raise SchemaError(f"database has migrations this memstrata does not know: {sorted(unknown)}")
    if missing := known - done:
        raise SchemaError(
            f"database needs migrations {sorted(missing)}: open it once for writing (any import, or `memstrata reindex`) to upgrade it"
        )


def apply(db: sqlite3.Connection) -> list[str]:
    """Apply the migrations this database lacks; returns their names. Refuses a newer schema.

    ``db`` must be in autocommit mode (``isolation_level=None``): each migration runs in its own
    explicit transaction together with its record in ``_migrations``.
    """
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at INTEGER)")
    done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    known = {m.__name__ for m in MIGRATIONS}
    if unknown := done - known:
        raise SchemaError(f"database has migrations this memstrata does not know: {sorted(unknown)}")
    applied = []
    for m in MIGRATIONS:
        if m.__name__ in done:
            continue
        db.execute("BEGIN IMMEDIATE")
        try:
            m(db)
            db.execute(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
                (m.__name__, int(time.time() * 1000)),
            )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        applied.append(m.__name__)
    return applied
