"""What the two SQL stores share: the columns of each record, rows back to records, and a
filter as SQL conditions. A ``Dialect`` says how SQLite and PostgreSQL differ (placeholders,
substring search, booleans, JSON columns and a metadata condition); everything else is written
once here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol

from memstrata.models import (
    Atom,
    AtomFilter,
    AtomType,
    Message,
    MessageFilter,
    MetadataFilter,
    Role,
    SessionState,
    SweepState,
    Tenant,
    TenantState,
)
from memstrata.models.filters import Scalar


class Row(Protocol):
    """A result row read by column name (``sqlite3.Row``, psycopg's dict rows)."""

    def __getitem__(self, key: str, /) -> Any: ...


MESSAGE_COLS = (
    "seq, id, user_id, agent_id, session_key, session_id, role, name, content, timestamp, recorded_at, "
    "metadata"
)
ATOM_COLS = (
    "seq, id, user_id, agent_id, session_key, type, priority, content, scene_name, source_message_ids, "
    "metadata, created_at, updated_at, version, superseded_by, pinned, expires_at"
)
# A session's state saved by the pipeline: every column but its key and the cursor, which only
# AtomStore.commit moves, with the atoms it covers.
SESSION_SAVED = ("pending", "runs", "fire_at", "attempts", "last_error", "last_activity")
SESSION_COLS = ", ".join(("user_id", "agent_id", "session_key", "cursor", *SESSION_SAVED))
# Every TenantState field but the tenant, in table column order.
TENANT_FIELDS = [f.name for f in fields(TenantState) if f.name != "tenant"]
TENANT_TUPLES = ("l3_reasons", "l2_rewrite")  # stored as JSON arrays
TENANT_FLAGS = tuple(f.name for f in fields(TenantState) if f.type in ("bool", bool))
SWEEP_FIELDS = [f.name for f in fields(SweepState)]


# (JSON column, key, values) -> a condition that the column's object has the key with one of the
# values (JSON equality: numbers by value, strings, booleans and numbers never equal), its params.
MetadataMatch = Callable[[str, str, Sequence[Scalar]], tuple[str, list[object]]]


def _sqlite_metadata(col: str, key: str, values: Sequence[Scalar]) -> tuple[str, list[object]]:
    """``json_extract`` gives SQL values (a JSON ``true`` is 1, an object is text), so each kind
    of value is checked with its ``json_type`` too."""
    path = f'$."{key}"'  # the key is identifier-like (``models.filters.KEY``): no quote inside
    texts = [v for v in values if isinstance(v, str)]
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    flags = sorted({"true" if v else "false" for v in values if isinstance(v, bool)})
    parts: list[str] = []
    params: list[object] = []
    for kinds, listed in ((("text",), texts), (("integer", "real"), numbers)):
        if listed:
            kind = ", ".join(f"'{k}'" for k in kinds)
            parts.append(
                f"(json_type({col}, ?) IN ({kind}) AND json_extract({col}, ?) IN ({', '.join('?' * len(listed))}))"
            )
            params += [path, path, *listed]
    if flags:
        quoted = ", ".join(f"'{f}'" for f in flags)
        parts.append(f"json_type({col}, ?) IN ({quoted})")
        params.append(path)
    return f"({' OR '.join(parts)})", params


def _postgres_metadata(col: str, key: str, values: Sequence[Scalar]) -> tuple[str, list[object]]:
    """``jsonb`` equality is JSON's: numbers by value, kinds apart (a missing key is NULL)."""
    return f"({col} -> %s) = ANY(%s::jsonb[])", [key, [json.dumps(v) for v in values]]


@dataclass(frozen=True, slots=True)
class Dialect:
    mark: str  # a query parameter
    contains: str  # "{col} holds the parameter, lower-cased", with {col}
    true: str  # a boolean column that is set
    json_text: bool  # JSON columns come back as text (else already decoded)
    insertion: str  # the column that orders a table's rows as they were first inserted
    metadata: MetadataMatch  # a metadata filter's condition

    def marks(self, n: int) -> str:
        return ", ".join([self.mark] * n)

    def decode(self, value: Any) -> Any:
        return json.loads(value) if self.json_text else value


SQLITE = Dialect(
    "?",
    "instr(lower({col}), ?) > 0",
    "{col} = 1",
    json_text=True,
    insertion="rowid",
    metadata=_sqlite_metadata,
)
POSTGRES = Dialect(
    "%s", "strpos(lower({col}), %s) > 0", "{col}", json_text=False, insertion="n", metadata=_postgres_metadata
)


def message(row: Row, d: Dialect) -> Message:
    return Message(
        id=row["id"],
        tenant=Tenant(row["user_id"], row["agent_id"]),
        session_key=row["session_key"],
        session_id=row["session_id"],
        role=Role(row["role"]),
        name=row["name"],
        content=row["content"],
        timestamp=row["timestamp"],
        recorded_at=row["recorded_at"],
        seq=row["seq"],
        metadata=dict(d.decode(row["metadata"])),
    )


def atom(row: Row, d: Dialect) -> Atom:
    return Atom(
        id=row["id"],
        tenant=Tenant(row["user_id"], row["agent_id"]),
        type=AtomType(row["type"]),
        content=row["content"],
        priority=row["priority"],
        scene_name=row["scene_name"],
        source_message_ids=tuple(d.decode(row["source_message_ids"])),
        metadata=dict(d.decode(row["metadata"])),
        session_key=row["session_key"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        version=row["version"],
        superseded_by=row["superseded_by"],
        seq=row["seq"],
        pinned=bool(row["pinned"]),
        expires_at=row["expires_at"],
    )


def session_state(row: Row) -> SessionState:
    return SessionState(
        tenant=Tenant(row["user_id"], row["agent_id"]),
        session_key=row["session_key"],
        cursor=row["cursor"],
        pending=row["pending"],
        runs=row["runs"],
        fire_at=row["fire_at"],
        attempts=row["attempts"],
        last_error=row["last_error"],
        last_activity=row["last_activity"],
    )


def tenant_state(row: Row, d: Dialect) -> TenantState:
    values = {name: row[name] for name in TENANT_FIELDS}
    for name in TENANT_TUPLES:
        values[name] = tuple(d.decode(values[name]))
    for name in TENANT_FLAGS:
        values[name] = bool(values[name])
    return TenantState(tenant=Tenant(row["user_id"], row["agent_id"]), **values)


def session_upsert(state: SessionState, d: Dialect) -> tuple[str, list[object]]:
    """The statement that saves every field of a session's state but its cursor: only
    ``AtomStore.commit`` moves the cursor, with the atoms it covers."""
    t = state.tenant
    return (
        f"INSERT INTO pipeline_sessions (user_id, agent_id, session_key, {', '.join(SESSION_SAVED)}) "
        f"VALUES ({d.marks(3 + len(SESSION_SAVED))}) ON CONFLICT (user_id, agent_id, session_key) "
        f"DO UPDATE SET {_excluded(SESSION_SAVED)}",
        [t.user_id, t.agent_id, state.session_key, *(getattr(state, name) for name in SESSION_SAVED)],
    )


def tenant_upsert(state: TenantState, d: Dialect) -> tuple[str, list[object]]:
    """The statement that saves every field of a tenant's L2/L3 state."""
    values: list[object] = [getattr(state, name) for name in TENANT_FIELDS]
    for name in TENANT_TUPLES:
        values[TENANT_FIELDS.index(name)] = json.dumps(list(getattr(state, name)))
    return (
        f"INSERT INTO pipeline_tenants (user_id, agent_id, {', '.join(TENANT_FIELDS)}) "
        f"VALUES ({d.marks(2 + len(TENANT_FIELDS))}) ON CONFLICT (user_id, agent_id) "
        f"DO UPDATE SET {_excluded(TENANT_FIELDS)}",
        [state.tenant.user_id, state.tenant.agent_id, *values],
    )


def sweep_upsert(state: SweepState, d: Dialect) -> tuple[str, list[object]]:
    """The statement that saves the retention sweep's state (one row, id 1)."""
    return (
        f"INSERT INTO pipeline_sweep (id, {', '.join(SWEEP_FIELDS)}) VALUES (1, {d.marks(len(SWEEP_FIELDS))}) "
        f"ON CONFLICT (id) DO UPDATE SET {_excluded(SWEEP_FIELDS)}",
        [getattr(state, name) for name in SWEEP_FIELDS],
    )


def _excluded(columns: Sequence[str]) -> str:
    return ", ".join(f"{c} = excluded.{c}" for c in columns)


def tenant_clause(tenant: Tenant | None, d: Dialect, alias: str = "") -> tuple[list[str], list[object]]:
    if tenant is None:
        return [], []
    p = f"{alias}." if alias else ""
    return [f"{p}user_id = {d.mark}", f"{p}agent_id = {d.mark}"], [tenant.user_id, tenant.agent_id]


def filter_clause(
    flt: MessageFilter | AtomFilter, d: Dialect, alias: str = ""
) -> tuple[list[str], list[object]]:
    """SQL conditions for a filter (joined with AND by the caller)."""
    p = f"{alias}." if alias else ""
    where: list[str] = []
    params: list[object] = []
    if isinstance(flt, MessageFilter):
        time_col = f"{p}timestamp"
        if flt.session_key is not None:
            where.append(f"{p}session_key = {d.mark}")
            params.append(flt.session_key)
    else:
        time_col = f"{p}event_time"
        if flt.type is not None:
            where.append(f"{p}type = {d.mark}")
            params.append(str(flt.type))
        if flt.scene:
            where.append(d.contains.format(col=f"{p}scene_name"))
            params.append(flt.scene.lower())
        if not flt.include_superseded:
            where.append(f"{p}superseded_by IS NULL")
        if flt.at is not None:
            pinned = d.true.format(col=f"{p}pinned")
            where.append(f"({p}expires_at IS NULL OR {p}expires_at > {d.mark} OR {pinned})")
            params.append(flt.at)
    if flt.metadata:
        mw, mp = metadata_clause(flt.metadata, d, f"{p}metadata")
        where += mw
        params += mp
    if flt.since is not None:
        where.append(f"{time_col} >= {d.mark}")
        params.append(flt.since)
    if flt.until is not None:
        where.append(f"{time_col} < {d.mark}")
        params.append(flt.until)
    return where, params


def metadata_clause(flt: MetadataFilter, d: Dialect, col: str) -> tuple[list[str], list[object]]:
    """One condition per key of a metadata filter, on the JSON column ``col``."""
    where: list[str] = []
    params: list[object] = []
    for c in flt.conditions:
        w, p = d.metadata(col, c.key, c.values)
        where.append(w)
        params += p
    return where, params
