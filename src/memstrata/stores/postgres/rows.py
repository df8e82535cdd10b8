"""Row <-> record conversion and filter clauses of the PostgreSQL store parts (``stores/sql.py``
in PostgreSQL's dialect), and text as PostgreSQL accepts it."""

from __future__ import annotations

import json
from typing import Any

from memstrata.models import Atom, AtomFilter, Message, MessageFilter, Tenant
from memstrata.stores import sql

Row = dict[str, Any]
MESSAGE_COLS, ATOM_COLS = sql.MESSAGE_COLS, sql.ATOM_COLS


def message(row: Row) -> Message:
    return sql.message(row, sql.POSTGRES)


def atom(row: Row) -> Atom:
    return sql.atom(row, sql.POSTGRES)


def tenant_clause(tenant: Tenant | None, alias: str = "") -> tuple[list[str], list[object]]:
    return sql.tenant_clause(tenant, sql.POSTGRES, alias)


def filter_clause(flt: MessageFilter | AtomFilter, alias: str = "") -> tuple[list[str], list[object]]:
    """SQL conditions for a filter (joined with AND by the caller)."""
    return sql.filter_clause(flt, sql.POSTGRES, alias)


def json_text(value: object) -> str:
    """``value`` as JSON that ``jsonb`` accepts (every string through ``text``)."""
    return json.dumps(_clean(value), default=str)


def _clean(value: object) -> object:
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {text(str(k)): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def text(value: str) -> str:
    """``value`` as PostgreSQL stores text: NUL bytes (which it refuses) dropped, a lone surrogate
    (no UTF-8 for it) replaced by ``?``."""
    return value.replace("\0", "").encode("utf-8", errors="replace").decode("utf-8")
