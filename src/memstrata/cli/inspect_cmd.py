"""``memstrata inspect LAYER``: read what each layer holds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer
from rich.markup import escape

from memstrata.cli.common import Agent, DataDir, Format, console, emit, iso, open_memory, parse_since
from memstrata.errors import PathError
from memstrata.layers.l2 import names as scene_names
from memstrata.models import Scene, SceneEntry, Tenant
from memstrata.operations import BlockingMemoryApi

app = typer.Typer(help="Read what each layer holds.", no_args_is_help=True)

Since = Annotated[str | None, typer.Option("--since", help="e.g. 7d, 12h, or an ISO date.")]
Limit = Annotated[int, typer.Option("--limit", "-n", help="At most this many records.")]
Fmt = Annotated[Format, typer.Option("--format", "-f", help="table, json or jsonl.")]
AnyUser = Annotated[str | None, typer.Option("--user", help="Only this user (default: every tenant).")]


@app.command("l0")
def inspect_l0(
    ctx: typer.Context,
    since: Since = None,
    session: Annotated[str | None, typer.Option("--session", help="Only this session key.")] = None,
    user: AnyUser = None,
    agent: Agent = "default",
    limit: Limit = 100,
    fmt: Fmt = Format.table,
    data_dir: DataDir = None,
) -> None:
    """Raw messages (L0), oldest first."""
    with open_memory(ctx, data_dir, write=False, embedder=None) as mem:
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
    user: AnyUser = None,
    agent: Agent = "default",
    limit: Limit = 100,
    fmt: Fmt = Format.table,
    data_dir: DataDir = None,
) -> None:
    """Memory atoms (L1), oldest first."""
    with open_memory(ctx, data_dir, write=False, embedder=None) as mem:
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


@app.command("l2")
def inspect_l2(
    ctx: typer.Context,
    scene: Annotated[
        str | None, typer.Option("--scene", help="Print this scene file (e.g. family.md) in full.")
    ] = None,
    user: AnyUser = None,
    agent: Agent = "default",
    fmt: Fmt = Format.table,
    data_dir: DataDir = None,
) -> None:
    """Scene documents (L2): the index of each tenant, or one scene in full."""
    with open_memory(ctx, data_dir, write=False, embedder=None) as mem:
        tenants = [Tenant(user, agent)] if user is not None else mem.tenants()
        if scene is not None:
            docs = [(t, d) for t in tenants if (d := _find_scene(mem, t, scene)) is not None]
            if not docs:
                raise PathError("no tenant has this scene", path=scene)
            for t, d in docs:
                _print_scene(t, d, fmt)
            return
        rows = [(t, e) for t in tenants for e in mem.scenes(user_id=t.user_id, agent_id=t.agent_id)]
    emit(
        [_SceneRow(t, e) for t, e in rows],
        fmt,
        [
            ("tenant", lambda r: r.tenant),
            ("file", lambda r: f"scene_blocks/{r.entry.name}"),
            ("heat", lambda r: r.entry.heat),
            ("updated", lambda r: iso(r.entry.updated)),
            ("atoms", lambda r: len(r.entry.atom_ids)),
            ("summary", lambda r: r.entry.summary),
        ],
        title="L2 scenes",
    )


@app.command("l3")
def inspect_l3(
    ctx: typer.Context,
    user: AnyUser = None,
    agent: Agent = "default",
    navigation: Annotated[
        bool, typer.Option("--navigation/--no-navigation", help="Include the scene navigation.")
    ] = True,
    fmt: Fmt = Format.table,
    data_dir: DataDir = None,
) -> None:
    """The persona (L3) of each tenant: persona.md, body and scene navigation."""
    with open_memory(ctx, data_dir, write=False, embedder=None) as mem:
        tenants = [Tenant(user, agent)] if user is not None else mem.tenants()
        found = [p for t in tenants if (p := mem.persona(user_id=t.user_id, agent_id=t.agent_id))]
    if fmt != Format.table:
        emit(found, fmt, [])
        return
    if not found:
        console.print("no persona yet (it is written after the first scenes: run `memstrata import`)")
    for p in found:
        console.rule(f"[bold]L3 persona[/bold] {p.tenant}  (updated {iso(p.updated)})")
        console.print(escape(p.body))
        if navigation and p.navigation:
            console.print()
            console.print(escape(p.navigation))


@dataclass(frozen=True, slots=True)
class _SceneRow:
    tenant: Tenant
    entry: SceneEntry


def _find_scene(mem: BlockingMemoryApi, tenant: Tenant, path: str) -> Scene | None:
    names = {e.name for e in mem.scenes(user_id=tenant.user_id, agent_id=tenant.agent_id)}
    if scene_names.from_path(path) not in names:
        return None
    return mem.read_scene(path, user_id=tenant.user_id, agent_id=tenant.agent_id)


def _print_scene(tenant: Tenant, doc: Scene, fmt: Format) -> None:
    if fmt != Format.table:
        emit([doc], fmt, [])
        return
    console.rule(f"[bold]L2 scene[/bold] {tenant} scene_blocks/{doc.name}")
    console.print(f"summary: {escape(doc.summary)}\nheat: {doc.heat}  updated: {iso(doc.updated)}\n")
    console.print(escape(doc.body))
