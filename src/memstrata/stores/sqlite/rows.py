"""Row <-> record conversion and filter clauses of the SQLite store parts (``stores/sql.py`` in
SQLite's dialect)."""

from __future__ import annotations

import sqlite3

from memstrata.models import Atom, AtomFilter, Message, MessageFilter, Tenant
from memstrata.stores import sql

MESSAGE_COLS, ATOM_COLS = sql.MESSAGE_COLS, sql.ATOM_COLS


def message(row: sqlite3.Row) -> Message:
    return sql.message(row, sql.SQLITE)


def atom(row: sqlite3.Row) -> Atom:
    return sql.atom(row, sql.SQLITE)


def chunks(items: list[str], size: int = 500) -> list[list[str]]:
    """``items`` in slices small enough for one ``IN (...)`` list."""
    return [items[i : i + size] for i in range(0, len(items), size)]


def tenant_clause(tenant: Tenant | None, alias: str = "") -> tuple[list[str], list[object]]:
    return sql.tenant_clause(tenant, sql.SQLITE, alias)


def filter_clause(flt: MessageFilter | AtomFilter, alias: str = "") -> tuple[list[str], list[object]]:
    """SQL conditions for a filter (joined with AND by the caller)."""
    return sql.filter_clause(flt, sql.SQLITE, alias)


def is_trivial(flt: MessageFilter | AtomFilter) -> bool:
    """True when the filter selects every record of the tenant."""
    return not filter_clause(flt)[0]
