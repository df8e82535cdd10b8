"""``memstrata status`` and ``memstrata reindex``."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from memstrata.cli.common import DataDir, Format, console, emit, iso, open_memory, print_degradations
from memstrata.models import TenantStatus


def register(app: typer.Typer) -> None:
    app.command("status")(status)
    app.command("reindex")(reindex)


def status(
    ctx: typer.Context,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="table, json or jsonl.")] = Format.table,
    data_dir: DataDir = None,
) -> None:
    """Pipeline queues, cursors, lag and the last error of every session (L1) and tenant (L2/L3)."""
    with open_memory(ctx, data_dir, write=False) as mem:
        st = mem.status()
    if fmt != Format.table:
        emit([st], fmt, [])
        return
    console.print(
        f"{st.messages} messages, {st.atoms} current atoms; embedder: {st.embedder or 'none'}, "
        f"search: {st.strategy}; {st.unembedded} records waiting for a vector"
    )
    if st.last_sweep is not None:
        console.print(f"retention sweep last ran {iso(st.last_sweep)} UTC")
    if (q := st.query_embedding) is not None and q.queries:
        console.print(
            f"query embeddings: {q.queries} queries, {q.cached} cached, {q.passes} passes "
            f"({q.batched} batched, largest {q.largest}), longest wait {q.wait_ms_max:.1f} ms"
            + (
                f"; query process {q.process}, {q.process_passes} passes, {q.process_failures} failures"
                if q.process != "off"
                else ""
            )
        )
    for note in ([st.vectors_note] if st.vectors_note else []) + list(st.problems):
        console.print(f"[yellow]degraded[/yellow] {escape(note)}", soft_wrap=True)
    print_degradations(st)
    emit(
        list(st.sessions),
        fmt,
        [
            ("tenant", lambda s: s.tenant),
            ("session", lambda s: s.session_key),
            ("cursor", lambda s: s.cursor),
            ("lag", lambda s: s.lag),
            ("pending", lambda s: s.pending),
            ("next run", lambda s: iso(s.fire_at)),
            ("attempts", lambda s: s.attempts),
            ("last error", lambda s: s.last_error or ""),
        ],
        title="L1 pipeline",
    )
    emit(
        list(st.tenants),
        fmt,
        [
            ("tenant", lambda t: t.tenant),
            ("L2 cursor", lambda t: t.l2_cursor),
            ("L2 next run", lambda t: iso(t.l2_fire_at)),
            ("L2 attempts", lambda t: t.l2_attempts),
            ("L2 last error", lambda t: t.l2_error or ""),
            ("L3", l3_state),
            ("L3 attempts", lambda t: t.l3_attempts),
            ("L3 last error", lambda t: t.l3_error or ""),
        ],
        title="L2/L3 pipeline",
    )


def l3_state(t: TenantStatus) -> str:
    """The persona's state in a few words: pending (a run is owed) or when it was last written."""
    written = f"written {iso(t.last_l3)}" if t.last_l3 is not None else "no persona yet"
    return f"pending; {written}" if t.l3_pending else written


def reindex(ctx: typer.Context, data_dir: DataDir = None) -> None:
    """Re-embed stored messages and atoms (all of them after an embedder change)."""
    with open_memory(ctx, data_dir, write=True) as mem:
        n = mem.reindex()
        name = mem.status().embedder
    console.print(f"embedded {n} records with {name}")
