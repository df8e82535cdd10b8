"""``memstrata inspect LAYER``: read what each layer holds."""

from __future__ import annotations

from typing import Annotated

import typer

from memstrata.cli.common import Agent, DataDir, Format, emit, iso, open_memory, parse_since

app = typer.Typer(help="Read what each layer holds.", no_args_is_help=True)

Since = Annotated[str | None, typer.Option("--since", help="e.g. 7d, 12h, or an ISO date.")]
Limit = Annotated[int, typer.Option("--limit", "-n", help="At most this many records.")]
Fmt = Annotated[Format, typer.Option("--format", "-f", help="table, json or jsonl.")]


@app.command("l0")
def inspect_l0(
    ctx: typer.Context,
    since: Since = None,
    session: Annotated[str | None, typer.Option("--session", help="Only this session key.")] = None,
    user: Annotated[
        str | None, typer.Option("--user", help="Only this user (default: every tenant).")
    ] = None,
    agent: Agent = "default",
    limit: Limit = 100,
    fmt: Fmt = Format.table,
    data_dir: DataDir = None,
) -> None:
    """Raw messages (L0), oldest first."""
    with open_memory(ctx, data_dir, embedder=None) as mem:
        rows = mem.messages(
            user_id=user, agent_id=agent, session_key=session, since=parse_since(since), limit=limit
        )
    emit(
        rows,
        fmt,
        [
            ("seq", lambda m: m.seq),
            ("tenant", lambda m: m.tenant),
            ("session", lambda m: m.session_key),
            ("time", lambda m: iso(m.timestamp)),
            ("speaker", lambda m: m.name or m.role),
            ("content", lambda m: m.content),
        ],
        title="L0 messages",
    )


@app.command("l1")
def inspect_l1(
    ctx: typer.Context,
    since: Since = None,
    atom_type: Annotated[str | None, typer.Option("--type", help="persona, episodic or instruction.")] = None,
    scene: Annotated[str | None, typer.Option("--scene", help="Scene name contains this.")] = None,
    history: Annotated[bool, typer.Option("--history", help="Include superseded atoms.")] = False,
    user: Annotated[
        str | None, typer.Option("--user", help="Only this user (default: every tenant).")
    ] = None,
    agent: Agent = "default",
    limit: Limit = 100,
    fmt: Fmt = Format.table,
    data_dir: DataDir = None,
) -> None:
    """Memory atoms (L1), oldest first."""
    with open_memory(ctx, data_dir, embedder=None) as mem:
        rows = mem.atoms(
            user_id=user,
            agent_id=agent,
            type=atom_type,
            scene=scene,
            since=parse_since(since),
            include_superseded=history,
            limit=limit,
        )
    emit(
        rows,
        fmt,
        [
            ("seq", lambda a: a.seq),
            ("tenant", lambda a: a.tenant),
            ("type", lambda a: a.type),
            ("scene", lambda a: a.scene_name),
            ("content", lambda a: a.content),
            ("sources", lambda a: ", ".join(a.source_message_ids[:3])),
        ],
        title="L1 atoms",
    )
