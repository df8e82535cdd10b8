"""``memstrata search QUERY``: ranked hits from atoms and/or raw messages."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from memstrata.cli.common import Agent, DataDir, Format, User, emit, err_console, open_memory, plain


def register(app: typer.Typer) -> None:
    app.command("search")(search)
    app.command("recall")(recall)


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for.")],
    user: User = "default",
    agent: Agent = "default",
    limit: Annotated[int, typer.Option("--limit", "-n")] = 10,
    layers: Annotated[str, typer.Option("--layers", help="Comma-separated: L1, L0.")] = "L1,L0",
    mode: Annotated[str, typer.Option("--mode", help="hybrid, keyword or vector.")] = "hybrid",
    as_json: Annotated[bool, typer.Option("--json", help="Print hits as JSON.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Search one tenant's memory."""
    with open_memory(ctx, data_dir, write=False) as mem:
        result = mem.search(
            query,
            user_id=user,
            agent_id=agent,
            limit=limit,
            mode=mode,
            layers=[x.strip() for x in layers.split(",") if x.strip()],
        )
    if as_json:
        out = {
            "strategy": result.strategy,
            "degradations": list(result.degradations),
            "hits": [plain(h) for h in result],
        }
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
        return
    for note in result.degradations:
        err_console.print(f"[yellow]note:[/yellow] {note}")
    emit(list(result), Format.table, _COLUMNS, title=f"{len(result)} hits ({result.strategy})")


_COLUMNS = [
    ("layer", lambda h: h.layer),
    ("score", lambda h: f"{h.score:.4f}"),
    ("content", lambda h: h.content),
    ("sources", lambda h: ", ".join(h.source_message_ids[:3])),
]


def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="The user's next message.")],
    user: User = "default",
    agent: Agent = "default",
    session: Annotated[str | None, typer.Option("--session", help="Session key of the conversation.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result as JSON.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Show the context memstrata would inject before a prompt."""
    with open_memory(ctx, data_dir, write=False) as mem:
        result = mem.recall(query, user_id=user, agent_id=agent, session_key=session)
    if as_json:
        sys.stdout.write(json.dumps(plain(result), ensure_ascii=False, indent=2) + "\n")
        return
    for note in result.degradations:
        err_console.print(f"[yellow]note:[/yellow] {note}")
    sys.stdout.write(f"{result.system_context}\n\n{result.prepend_context}\n")
