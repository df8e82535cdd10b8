"""``memstrata forget``, ``export``, ``sweep``, ``rebuild-scenes``, ``pin`` and ``expire``:
forgetting on purpose, and taking memory elsewhere."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from memstrata.cli.common import Agent, DataDir, User, console, err_console, iso, open_memory
from memstrata.models import ForgetReport


def register(app: typer.Typer) -> None:
    app.command("forget")(forget)
    app.command("export")(export)
    app.command("sweep")(sweep)
    app.command("rebuild-scenes")(rebuild_scenes)
    app.command("pin")(pin)
    app.command("expire")(expire)


def forget(
    ctx: typer.Context,
    user: Annotated[str, typer.Option("--user", help="The user to forget (every agent unless --agent).")],
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent of the user.")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm: this cannot be undone.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Erase a user (or one agent of a user) for good: every layer, index, mirror line, scene and
    persona file with its backups; the database is rewritten so the text is gone from disk."""
    who = f"user {user!r}" + (f", agent {agent!r}" if agent is not None else " (every agent)")
    if not yes:
        err_console.print(f"[red]refusing:[/red] forgetting {escape(who)} cannot be undone; add --yes")
        raise typer.Exit(2)
    with open_memory(ctx, data_dir, write=True, embedder=None) as mem:
        report = mem.forget(user_id=user, agent_id=agent)
    _print_forget(who, report)


def _print_forget(who: str, r: ForgetReport) -> None:
    if not r.tenants:
        console.print(f"nothing stored for {escape(who)}")
        return
    e = r.erased
    names = ", ".join(str(t) for t in r.tenants)
    console.print(f"forgot {escape(names)}", soft_wrap=True)
    console.print(
        f"removed {e.messages} messages, {e.atoms} atoms (every version), {e.vectors} vectors, "
        f"{e.scene_members} scene memberships, {e.sessions + e.tenant_states} pipeline states, "
        f"{e.mirror_lines} mirror lines, {r.files} profile files"
    )
    console.print("space reclaimed: the database was rewritten and its WAL truncated" if r.reclaimed else "")
    for note in r.notes:
        console.print(f"[yellow]note[/yellow] {escape(note)}", soft_wrap=True)


def export(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", help="A new (or empty) folder to write.")],
    fmt: Annotated[str, typer.Option("--format", help="jsonl or tdai.")] = "jsonl",
    user: Annotated[
        str | None, typer.Option("--user", help="Only this user (default: every tenant).")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent of --user.")] = None,
    data_dir: DataDir = None,
) -> None:
    """Export every layer of a tenant (or of all) as portable files: JSONL per layer, or a
    TencentDB-Agent-Memory data directory. `import --from-export` reads either back."""
    with open_memory(ctx, data_dir, write=False, embedder=None) as mem:
        r = mem.export(out, format=fmt, user_id=user, agent_id=agent)
    console.print(
        f"exported {len(r.tenants)} tenants to {escape(r.path)} ({r.format}): {r.messages} messages, "
        f"{r.atoms} atoms, {r.scenes} scenes, {r.personas} personas",
        soft_wrap=True,
    )


def sweep(ctx: typer.Context, data_dir: DataDir = None) -> None:
    """Run the retention sweep now: messages past capture.retention_days, expired atoms, atoms
    past retention.atoms_days (it also runs daily at retention.sweep_at)."""
    with open_memory(ctx, data_dir, write=True, embedder=None) as mem:
        r = mem.sweep()
    console.print(f"sweep at {iso(r.at)}: {r.describe()}")


def rebuild_scenes(
    ctx: typer.Context, user: User = "default", agent: Agent = "default", data_dir: DataDir = None
) -> None:
    """Re-consolidate a tenant's scenes from its current atoms, then write its persona afresh."""
    with open_memory(ctx, data_dir, write=True) as mem:
        entries = mem.rebuild_scenes(user_id=user, agent_id=agent)
    console.print(f"{len(entries)} scenes: " + ", ".join(escape(e.name) for e in entries), soft_wrap=True)


def pin(
    ctx: typer.Context,
    atom_id: Annotated[str, typer.Argument(help="The atom to pin.")],
    unpin: Annotated[bool, typer.Option("--unpin", help="Remove the pin instead.")] = False,
    user: User = "default",
    agent: Agent = "default",
    data_dir: DataDir = None,
) -> None:
    """Pin an atom: it never expires and is never swept, merged away or superseded by the pipeline."""
    with open_memory(ctx, data_dir, write=True, embedder=None) as mem:
        a = mem.pin_atom(atom_id, not unpin, user_id=user, agent_id=agent)
    console.print(
        f"{'pinned' if a.pinned else 'unpinned'} {escape(a.id)}: {escape(a.content)}", soft_wrap=True
    )


def expire(
    ctx: typer.Context,
    atom_id: Annotated[str, typer.Argument(help="The atom.")],
    at: Annotated[str | None, typer.Option("--at", help="When it expires: ISO 8601 or epoch ms.")] = None,
    days: Annotated[float | None, typer.Option("--in-days", help="Expire this many days from now.")] = None,
    never: Annotated[bool, typer.Option("--never", help="Remove its time to live.")] = False,
    user: User = "default",
    agent: Agent = "default",
    data_dir: DataDir = None,
) -> None:
    """Give an atom a time to live: from then it leaves search and recall, and the sweep deletes it."""
    if sum((at is not None, days is not None, never)) != 1:
        raise typer.BadParameter("give exactly one of --at, --in-days or --never", param_hint="--at")
    when: int | str | None = int(at) if at is not None and at.isdigit() else at
    ttl = days * 86400 if days is not None else None
    with open_memory(ctx, data_dir, write=True, embedder=None) as mem:
        a = mem.set_atom_ttl(atom_id, expires_at=when, ttl_seconds=ttl, user_id=user, agent_id=agent)
    shown = f"expires {iso(a.expires_at)} UTC" if a.expires_at is not None else "never expires"
    console.print(f"{escape(a.id)} {shown}: {escape(a.content)}", soft_wrap=True)
