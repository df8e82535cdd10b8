"""What a SQLite data directory holds, read from its database file beside the process that writes it."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def counts(home: Path) -> tuple[int, int, int]:
    """(messages, atoms, messages after their session's cursor), read from the database file."""
    conn = sqlite3.connect(f"file:{home / 'memstrata.db'}?mode=ro", uri=True)
    try:
        messages = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        atoms = conn.execute("SELECT COUNT(*) FROM atoms").fetchone()[0]
        behind = conn.execute(
            "SELECT COUNT(*) FROM messages m LEFT JOIN pipeline_sessions p ON p.user_id = m.user_id "
            "AND p.agent_id = m.agent_id AND p.session_key = m.session_key "
            "WHERE m.seq > COALESCE(p.cursor, 0)"
        ).fetchone()[0]
    finally:
        conn.close()
    return int(messages), int(atoms), int(behind)
