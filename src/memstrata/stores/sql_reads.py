"""The reads both SQL stores run as they are, written once in either ``Dialect``: a session's
messages around a cursor, its sessions, and listing, tallying and counting messages and atoms by
filter. A store part inherits the reads of its records and sets ``_db`` and ``_dialect``; what
differs between the backends (inserts, locking, planner hints, search) stays in the part."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from memstrata.models import Atom, AtomFilter, Message, MessageFilter, Tenant
from memstrata.stores import sql


class Queries(Protocol):
    """A database that runs one read and returns its rows (both stores' ``Database``)."""

    def query(self, sql: str, params: list[object] = ..., /) -> Sequence[Any]: ...


class _Reads:
    _db: Queries
    _dialect: sql.Dialect

    def _conditions(
        self, tenant: Tenant | None, flt: MessageFilter | AtomFilter | None = None
    ) -> tuple[list[str], list[object]]:
        where, params = sql.tenant_clause(tenant, self._dialect)
        if flt is not None:
            fw, fp = sql.filter_clause(flt, self._dialect)
            where, params = [*where, *fw], [*params, *fp]
        return where, params

    def _by_seq(self, table: str, column: str, tenant: Tenant, seqs: Sequence[int]) -> dict[int, Any]:
        """``column`` of the tenant's records of ``table`` with these seqs, by seq. The tenant is
        checked here, not in the query: on SQLite a tenant condition led the planner to the
        tenant's index (a scan of the tenant) instead of the primary key."""
        if not seqs:
            return {}
        found = self._db.query(
            f"SELECT seq, user_id, agent_id, {column} FROM {table} "
            f"WHERE seq IN ({self._dialect.marks(len(seqs))})",
            list(seqs),
        )
        mine = (tenant.user_id, tenant.agent_id)
        return {int(r["seq"]): r[column] for r in found if (r["user_id"], r["agent_id"]) == mine}

    def _count(self, table: str, where: list[str], params: list[object]) -> int:
        clause = " AND ".join([*where, "1 = 1"])
        return int(self._db.query(f"SELECT COUNT(*) AS n FROM {table} WHERE {clause}", params)[0]["n"])


class MessageReads(_Reads):
    def ids_of(self, tenant: Tenant, seqs: Sequence[int]) -> dict[int, str]:
        return {seq: str(v) for seq, v in self._by_seq("messages", "id", tenant, seqs).items()}

    def last(self, tenant: Tenant, session_key: str) -> Message | None:
        found = self._db.query(
            f"SELECT {sql.MESSAGE_COLS} FROM messages WHERE {self._in_session()} ORDER BY seq DESC LIMIT 1",
            [tenant.user_id, tenant.agent_id, session_key],
        )
        return sql.message(found[0], self._dialect) if found else None

    def after(self, tenant: Tenant, session_key: str, after_seq: int, limit: int) -> list[Message]:
        m = self._dialect.mark
        found = self._db.query(
            f"SELECT {sql.MESSAGE_COLS} FROM messages WHERE {self._in_session()} AND seq > {m} "
            f"ORDER BY seq LIMIT {m}",
            [tenant.user_id, tenant.agent_id, session_key, after_seq, limit],
        )
        return [sql.message(r, self._dialect) for r in found]

    def before(self, tenant: Tenant, session_key: str, before_seq: int, limit: int) -> list[Message]:
        m = self._dialect.mark
        found = self._db.query(
            f"SELECT {sql.MESSAGE_COLS} FROM messages WHERE {self._in_session()} AND seq < {m} "
            f"ORDER BY seq DESC LIMIT {m}",
            [tenant.user_id, tenant.agent_id, session_key, before_seq, limit],
        )
        return [sql.message(r, self._dialect) for r in reversed(found)]

    def sessions(self, tenant: Tenant | None) -> list[tuple[Tenant, str]]:
        where, params = self._conditions(tenant)
        found = self._db.query(
            "SELECT user_id, agent_id, session_key, MIN(seq) AS first FROM messages "
            f"{'WHERE ' + ' AND '.join(where) if where else ''} "
            "GROUP BY user_id, agent_id, session_key ORDER BY first",
            params,
        )
        return [(Tenant(r["user_id"], r["agent_id"]), str(r["session_key"])) for r in found]

    def tally(self, tenant: Tenant, flt: MessageFilter) -> int:
        return self._count("messages", *self._conditions(tenant, flt))

    def first(self, tenant: Tenant, limit: int) -> list[Message]:
        m = self._dialect.mark
        found = self._db.query(
            f"SELECT {sql.MESSAGE_COLS} FROM messages WHERE user_id = {m} AND agent_id = {m} "
            f"ORDER BY timestamp, seq LIMIT {m}",
            [tenant.user_id, tenant.agent_id, limit],
        )
        return [sql.message(r, self._dialect) for r in found]

    def list(
        self, tenant: Tenant | None, flt: MessageFilter, *, limit: int, after_seq: int = 0
    ) -> list[Message]:
        mark = self._dialect.mark
        where, params = self._conditions(tenant, flt)
        found = self._db.query(
            f"SELECT {sql.MESSAGE_COLS} FROM messages WHERE {' AND '.join([f'seq > {mark}', *where])} "
            f"ORDER BY seq LIMIT {mark}",
            [after_seq, *params, limit],
        )
        return [sql.message(r, self._dialect) for r in found]

    def count(self, tenant: Tenant | None) -> int:
        return self._count("messages", *self._conditions(tenant))

    def _in_session(self) -> str:
        m = self._dialect.mark
        return f"user_id = {m} AND agent_id = {m} AND session_key = {m}"


class AtomReads(_Reads):
    def sources_of(self, tenant: Tenant, seqs: Sequence[int]) -> dict[int, tuple[str, ...]]:
        return {
            seq: tuple(str(i) for i in self._dialect.decode(v))
            for seq, v in self._by_seq("atoms", "source_message_ids", tenant, seqs).items()
        }

    def tally(self, tenant: Tenant, flt: AtomFilter) -> int:
        return self._count("atoms", *self._conditions(tenant, flt))

    def list(self, tenant: Tenant | None, flt: AtomFilter, *, limit: int, after_seq: int = 0) -> list[Atom]:
        mark = self._dialect.mark
        where, params = self._conditions(tenant, flt)
        found = self._db.query(
            f"SELECT {sql.ATOM_COLS} FROM atoms WHERE {' AND '.join([f'seq > {mark}', *where])} "
            f"ORDER BY seq LIMIT {mark}",
            [after_seq, *params, limit],
        )
        return [sql.atom(r, self._dialect) for r in found]

    def count(self, tenant: Tenant | None) -> int:
        where, params = self._conditions(tenant)
        return self._count("atoms", [*where, "superseded_by IS NULL"], params)
