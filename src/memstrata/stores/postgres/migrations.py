"""Schema history of the PostgreSQL store, as named migrations applied in order.

Each migration runs once, inside a transaction, and is recorded in ``_migrations``. Several
processes may open one database at once: ``apply`` holds an advisory lock while it migrates, so
one of them migrates and the others find the work done. Never edit a migration that has shipped:
add a new one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import psycopg

from memstrata.errors import SchemaError

Migration = Callable[[psycopg.Connection[Any]], None]
MIGRATIONS: list[Migration] = []
_LOCK = 0x6D656D7374726174  # "memstrat": the advisory lock key held while migrating
SEARCH_CONFIG = "memstrata_search"  # the text search configuration of both keyword indexes


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_extensions(db: psycopg.Connection[Any]) -> None:
    """pgvector, unaccent and btree_gin (tenant columns inside the keyword indexes), and the text
    search configuration: Snowball English stems with diacritics removed and no stopword list,
    like SQLite's FTS5 ``porter unicode61 remove_diacritics 2`` (stopwords are the query's job);
    ``memstrata_length`` counts a text's words (its positions) for BM25."""
    _ddl(
        db,
        f"""
        CREATE EXTENSION IF NOT EXISTS vector;
        CREATE EXTENSION IF NOT EXISTS unaccent;
        CREATE EXTENSION IF NOT EXISTS btree_gin;
        CREATE TEXT SEARCH DICTIONARY memstrata_stem (TEMPLATE = snowball, Language = english);
        CREATE TEXT SEARCH CONFIGURATION {SEARCH_CONFIG} (COPY = pg_catalog.simple);
        ALTER TEXT SEARCH CONFIGURATION {SEARCH_CONFIG}
            ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword,
                hword_asciipart, hword_part, hword_numpart
            WITH unaccent, memstrata_stem;
        CREATE FUNCTION memstrata_length(tsvector) RETURNS integer IMMUTABLE PARALLEL SAFE
            LANGUAGE sql AS 'SELECT COALESCE(SUM(COALESCE(array_length(positions, 1), 1)), 0)::integer FROM unnest($1)';
        CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
        """,
    )


@migration
def m002_messages(db: psycopg.Connection[Any]) -> None:
    """L0: the message log. ``seq`` is the cursor; ids are unique per tenant (idempotent capture).
    ``tsv`` is the keyword index of the indexed text (the message with its context), which is
    not stored itself: a hit returns only the message; ``dl`` its length in words (for BM25)."""
    _ddl(
        db,
        """
        CREATE TABLE messages (
            seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id           text NOT NULL,
            user_id      text NOT NULL,
            agent_id     text NOT NULL,
            session_key  text NOT NULL,
            session_id   text NOT NULL,
            role         text NOT NULL,
            name         text,
            content      text NOT NULL,
            timestamp    bigint NOT NULL,
            recorded_at  bigint NOT NULL,
            tsv          tsvector NOT NULL,
            dl           integer NOT NULL,
            UNIQUE (user_id, agent_id, id)
        );
        CREATE INDEX messages_session ON messages (user_id, agent_id, session_key, seq);
        CREATE INDEX messages_time ON messages (user_id, agent_id, timestamp);
        CREATE INDEX messages_tsv ON messages USING gin (user_id, agent_id, tsv);
        """,
    )


@migration
def m003_atoms(db: psycopg.Connection[Any]) -> None:
    """L1: memory atoms. A correction inserts a new row and points the old one's ``superseded_by``
    at it. ``event_time`` is when the content happened (the time filters use it); ``pinned`` and
    ``expires_at`` (ms; NULL: no time to live) say whether it may be forgotten."""
    _ddl(
        db,
        """
        CREATE TABLE atoms (
            seq                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id                  text NOT NULL,
            user_id             text NOT NULL,
            agent_id            text NOT NULL,
            session_key         text NOT NULL,
            type                text NOT NULL,
            priority            integer NOT NULL,
            content             text NOT NULL,
            scene_name          text NOT NULL,
            source_message_ids  jsonb NOT NULL,
            metadata            jsonb NOT NULL,
            event_time          bigint NOT NULL,
            created_at          bigint NOT NULL,
            updated_at          bigint NOT NULL,
            version             integer NOT NULL,
            superseded_by       text,
            pinned              boolean NOT NULL DEFAULT false,
            expires_at          bigint,
            tsv                 tsvector NOT NULL,
            dl                  integer NOT NULL,
            UNIQUE (user_id, agent_id, id)
        );
        CREATE INDEX atoms_tenant ON atoms (user_id, agent_id, seq);
        CREATE INDEX atoms_tsv ON atoms USING gin (user_id, agent_id, tsv);
        CREATE INDEX atoms_expiry ON atoms (expires_at) WHERE expires_at IS NOT NULL;
        CREATE INDEX atoms_updated ON atoms (updated_at);
        """,
    )


@migration
def m004_pipeline(db: psycopg.Connection[Any]) -> None:
    """Durable scheduler state: L1 per session (cursor, pending turns, timers, failures), L2/L3 per
    tenant (cursor, timers, L3 requests, failures, the backups of a run in progress, what
    forgetting asks the next runs to rewrite) and the daily retention sweep (one row). ``n`` keeps
    the order rows were first saved in."""
    _ddl(
        db,
        """
        CREATE TABLE pipeline_sessions (
            n              bigint GENERATED ALWAYS AS IDENTITY,
            user_id        text NOT NULL,
            agent_id       text NOT NULL,
            session_key    text NOT NULL,
            cursor         bigint NOT NULL DEFAULT 0,
            pending        integer NOT NULL DEFAULT 0,
            runs           integer NOT NULL DEFAULT 0,
            fire_at        bigint,
            attempts       integer NOT NULL DEFAULT 0,
            last_error     text,
            last_activity  bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (user_id, agent_id, session_key)
        );
        CREATE TABLE pipeline_tenants (
            n             bigint GENERATED ALWAYS AS IDENTITY,
            user_id       text NOT NULL,
            agent_id      text NOT NULL,
            l2_cursor     bigint NOT NULL DEFAULT 0,
            l2_fire_at    bigint,
            last_l2       bigint,
            last_active   bigint NOT NULL DEFAULT 0,
            l2_attempts   integer NOT NULL DEFAULT 0,
            l2_error      text,
            l2_snapshot   text,
            new_atoms     integer NOT NULL DEFAULT 0,
            l3_requested  integer NOT NULL DEFAULT 0,
            l3_done       integer NOT NULL DEFAULT 0,
            l3_reasons    jsonb NOT NULL DEFAULT '[]',
            l3_fire_at    bigint,
            l3_attempts   integer NOT NULL DEFAULT 0,
            l3_error      text,
            last_l3       bigint,
            l3_running    boolean NOT NULL DEFAULT false,
            l3_snapshot   text,
            l2_rewrite    jsonb NOT NULL DEFAULT '[]',
            l2_rebuild    boolean NOT NULL DEFAULT false,
            l3_fresh      boolean NOT NULL DEFAULT false,
            PRIMARY KEY (user_id, agent_id)
        );
        CREATE TABLE pipeline_sweep (
            id           integer PRIMARY KEY CHECK (id = 1),
            last_run     bigint,
            attempts     integer NOT NULL DEFAULT 0,
            last_error   text,
            retry_at     bigint,
            last_report  text
        );
        """,
    )


@migration
def m005_scenes(db: psycopg.Connection[Any]) -> None:
    """L2 as rows: each scene document's text as written (the source of truth) with its META fields
    read from it; the scene index (derived, one row per entry in order); which scene holds each
    consolidated atom; snapshots of a tenant's scenes and index taken before each L2 run."""
    _ddl(
        db,
        """
        CREATE TABLE scenes (
            user_id     text NOT NULL,
            agent_id    text NOT NULL,
            name        text NOT NULL,
            text        text NOT NULL,
            summary     text,
            heat        integer,
            created     bigint,
            updated     bigint,
            written_at  bigint NOT NULL,
            PRIMARY KEY (user_id, agent_id, name)
        );
        CREATE TABLE scene_index (
            user_id   text NOT NULL,
            agent_id  text NOT NULL,
            pos       integer NOT NULL,
            name      text NOT NULL,
            summary   text NOT NULL,
            heat      integer NOT NULL,
            created   bigint NOT NULL,
            updated   bigint NOT NULL,
            atom_ids  jsonb NOT NULL,
            PRIMARY KEY (user_id, agent_id, pos)
        );
        CREATE TABLE scene_members (
            user_id   text NOT NULL,
            agent_id  text NOT NULL,
            atom_id   text NOT NULL,
            scene     text NOT NULL,
            PRIMARY KEY (user_id, agent_id, atom_id)
        );
        CREATE TABLE scene_snapshots (
            n         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            user_id   text NOT NULL,
            agent_id  text NOT NULL,
            made_at   bigint NOT NULL,
            scenes    jsonb NOT NULL,
            index     text
        );
        CREATE INDEX scene_snapshots_tenant ON scene_snapshots (user_id, agent_id, n);
        """,
    )


@migration
def m006_persona(db: psycopg.Connection[Any]) -> None:
    """L3 as rows: the persona document and its snapshots; and documents set aside because they
    were unreadable (kept, never read again)."""
    _ddl(
        db,
        """
        CREATE TABLE persona (
            user_id     text NOT NULL,
            agent_id    text NOT NULL,
            text        text NOT NULL,
            written_at  bigint NOT NULL,
            PRIMARY KEY (user_id, agent_id)
        );
        CREATE TABLE persona_snapshots (
            n         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            user_id   text NOT NULL,
            agent_id  text NOT NULL,
            made_at   bigint NOT NULL,
            text      text NOT NULL
        );
        CREATE INDEX persona_snapshots_tenant ON persona_snapshots (user_id, agent_id, n);
        CREATE TABLE set_aside (
            n         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            user_id   text NOT NULL,
            agent_id  text NOT NULL,
            path      text NOT NULL,
            text      text NOT NULL,
            problem   text NOT NULL,
            made_at   bigint NOT NULL
        );
        """,
    )


@migration
def m007_api_keys(db: psycopg.Connection[Any]) -> None:
    """Scoped API keys: a digest of each key (never the key), its label, the tenants it reaches
    (JSON ``[[user, agent or null], ...]``), when it was created and revoked (ms). Every replica
    reads the row on each request, so a revocation is seen at once."""
    _ddl(
        db,
        """
        CREATE TABLE api_keys (
            id          text PRIMARY KEY,
            digest      text NOT NULL UNIQUE,
            label       text NOT NULL,
            tenants     jsonb NOT NULL,
            created_at  bigint NOT NULL,
            revoked_at  bigint
        );
        """,
    )


@migration
def m008_message_metadata(db: psycopg.Connection[Any]) -> None:
    """L0: each message's custom metadata, a JSON object (``{}`` for messages stored before);
    metadata filters read it with ``->`` inside the listing and search queries."""
    _ddl(db, "ALTER TABLE messages ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'::jsonb")


@migration
def m009_armed_sessions(db: psycopg.Connection[Any]) -> None:
    """The sessions whose L1 timer is set, found without reading every session the store ever
    held (the scheduler asks after every capture)."""
    _ddl(db, "CREATE INDEX pipeline_sessions_armed ON pipeline_sessions (fire_at) WHERE fire_at IS NOT NULL")


@migration
def m010_index_version(db: psycopg.Connection[Any]) -> None:
    """The version of the texts the index was built from (``retrieval/reindex.py``): 1 for a store
    that holds messages already (``memstrata reindex`` brings it to the current one), 2 for a new one."""
    _ddl(
        db,
        """
        INSERT INTO meta (key, value)
            SELECT 'index_version', CASE WHEN EXISTS (SELECT 1 FROM messages) THEN '1' ELSE '2' END
            ON CONFLICT (key) DO NOTHING
        """,
    )


@migration
def m011_index_version_3(db: psycopg.Connection[Any]) -> None:
    """Index version 3 (``retrieval/reindex.py``: short messages keep a longer previous turn) for a
    store that holds no messages yet; one that does keeps its version, so ``status`` asks for
    ``memstrata reindex``."""
    _ddl(
        db, "UPDATE meta SET value = '3' WHERE key = 'index_version' AND NOT EXISTS (SELECT 1 FROM messages)"
    )


@migration
def m012_index_version_4(db: psycopg.Connection[Any]) -> None:
    """Index version 4 (``retrieval/reindex.py``: an assistant's message is embedded from its first
    words) for a store that holds no messages yet; one that does keeps its version, so ``status``
    asks for ``memstrata reindex``."""
    _ddl(
        db, "UPDATE meta SET value = '4' WHERE key = 'index_version' AND NOT EXISTS (SELECT 1 FROM messages)"
    )


def _ddl(db: psycopg.Connection[Any], script: str) -> None:
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _done(db: psycopg.Connection[Any]) -> set[str]:
    found = db.execute("SELECT to_regclass('_migrations') IS NOT NULL").fetchone()
    if not found or not found[0]:
        return set()
    return {row[0] for row in db.execute("SELECT name FROM _migrations").fetchall()}


def _known_only(done: set[str]) -> None:
    if unknown := done - {m.__name__ for m in MIGRATIONS}:
        raise SchemaError(f"database has migrations this memstrata does not know: {sorted(unknown)}")


def check(db: psycopg.Connection[Any]) -> None:
    """For a read-only open: raise ``SchemaError`` unless every migration is applied (and no unknown
    one is); nothing is written."""
    done = _done(db)
    _known_only(done)
    if missing := {m.__name__ for m in MIGRATIONS} - done:
        raise SchemaError(
            f"database needs migrations {sorted(missing)}: open it once for writing to upgrade it"
        )


def apply(db: psycopg.Connection[Any]) -> list[str]:
    """Apply the migrations this database lacks; returns their names. Refuses a newer schema.
    ``db`` must be in autocommit mode: each migration runs in its own transaction together with its
    record in ``_migrations``."""
    db.execute("SELECT pg_advisory_lock(%s)", (_LOCK,))
    try:
        db.execute("CREATE TABLE IF NOT EXISTS _migrations (name text PRIMARY KEY, applied_at bigint)")
        done = _done(db)
        _known_only(done)
        applied = []
        for m in MIGRATIONS:
            if m.__name__ in done:
                continue
            with db.transaction():
                m(db)
                db.execute(
                    "INSERT INTO _migrations (name, applied_at) VALUES (%s, %s)",
                    (m.__name__, int(time.time() * 1000)),
                )
            applied.append(m.__name__)
        return applied
    finally:
        db.execute("SELECT pg_advisory_unlock(%s)", (_LOCK,))
