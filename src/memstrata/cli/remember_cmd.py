"""``memstrata remember TEXT``: a note stored as a memory atom at once, searchable on return."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from memstrata.cli.common import Agent, DataDir, User, open_memory, plain


def register(app: typer.Typer) -> None:
    app.command("remember")(remember)


def remember(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The note, as the user said it.")],
    user: User = "default",
    agent: Agent = "default",
    type: Annotated[
        str | None, typer.Option("--type", help="persona, episodic or instruction (default: persona).")
    ] = None,
    metadata: Annotated[
        str | None, typer.Option("--metadata", help='A JSON object kept on the atom, e.g. {"source": "cli"}.')
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the atom as JSON.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Store a note as a memory atom now (no extraction run needed)."""
    extra = _metadata(metadata)
    with open_memory(ctx, data_dir, write=True) as mem:
        atom = mem.remember(text, user_id=user, agent_id=agent, type=type, metadata=extra)
    if as_json:
        sys.stdout.write(json.dumps(plain(atom), ensure_ascii=False, indent=2) + "\n")
        return
    sys.stdout.write(f"remembered {atom.id} [{atom.type}] {atom.content}\n")


def _metadata(raw: str | None) -> dict[str, object] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"not JSON: {exc}", param_hint="--metadata") from None
    if not isinstance(value, dict):
        raise typer.BadParameter("must be a JSON object", param_hint="--metadata")
    return value
