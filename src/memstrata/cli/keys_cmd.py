"""``memstrata keys create|list|revoke``: the server's scoped API keys (stored as digests).

Run against the data directory or database (``--store``), or through a running server with
``--url`` and the admin key in ``$MEMSTRATA_API_KEY``."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape

from memstrata.cli.common import DataDir, console, err_console, iso, open_memory
from memstrata.models import ApiKey
from memstrata.models.keys import unguarded_keys
from memstrata.settings import load_settings

app = typer.Typer(help="Scoped API keys: create, list, revoke.", no_args_is_help=True)


@app.command("create")
def create(
    ctx: typer.Context,
    users: Annotated[list[str], typer.Option("--user", help="A user the key reaches (repeat for more).")],
    agent: Annotated[
        str | None, typer.Option("--agent", help="Only this agent of each user (default: every agent).")
    ] = None,
    label: Annotated[str, typer.Option("--label", help="A name for people and logs.")] = "",
    data_dir: DataDir = None,
) -> None:
    """Create a key bound to one user (or a few): its requests act on that tenant only. The key
    is printed once; only its digest is stored."""
    with open_memory(ctx, data_dir, write=True, embedder=None) as mem:
        issued = mem.create_key([(u, agent) for u in users], label=label)
        warning = unguarded_keys(mem.keys(), load_settings().api_key is not None)
    console.print(f"created key {escape(issued.key.id)} ({escape(issued.key.label)}): {_reach(issued.key)}")
    if warning is not None:
        err_console.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True)
    console.print("the key (shown this once):")
    print(issued.secret)


@app.command("list")
def list_keys(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per key.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Every key: id, label, tenants, created and revoked times (never the key itself)."""
    with open_memory(ctx, data_dir, write=False, embedder=None) as mem:
        found = mem.keys()
    for k in found:
        if as_json:
            print(
                json.dumps(
                    {
                        "id": k.id,
                        "label": k.label,
                        "tenants": k.tenants,
                        "created_at": k.created_at,
                        "revoked_at": k.revoked_at,
                    }
                )
            )
            continue
        state = f"revoked {iso(k.revoked_at)}" if k.revoked_at is not None else "active"
        console.print(
            f"{escape(k.id)}  {escape(k.label)}  {_reach(k)}  created {iso(k.created_at)}  {state}",
            soft_wrap=True,
        )
    if not found and not as_json:
        console.print("no keys")


@app.command("revoke")
def revoke(
    ctx: typer.Context,
    key_id: Annotated[str, typer.Argument(help="The key's id (from `keys list`).")],
    data_dir: DataDir = None,
) -> None:
    """Revoke a key: its next request fails, on every server of this store."""
    with open_memory(ctx, data_dir, write=True, embedder=None) as mem:
        k = mem.revoke_key(key_id)
    console.print(f"revoked {escape(k.id)} ({escape(k.label)}) at {iso(k.revoked_at)}")


def _reach(k: ApiKey) -> str:
    return escape(", ".join(u if a is None else f"{u}/{a}" for u, a in k.tenants))
