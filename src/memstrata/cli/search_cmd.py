"""``memstrata search QUERY``: ranked hits from atoms and/or raw messages."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from memstrata.cli.common import Agent, DataDir, Format, User, emit, err_console, open_memory, plain
from memstrata.models import DEFAULT_LAYERS


def register(app: typer.Typer) -> None:
    app.command("search")(search)
    app.command("recall")(recall)


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for.")],
    user: User = "default",
    agent: Agent = "default",
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many hits.")] = 10,
    layers: Annotated[str, typer.Option("--layers", help="Comma-separated: L1, L0.")] = ",".join(
        DEFAULT_LAYERS
    ),
    mode: Annotated[str, typer.Option("--mode", help="hybrid, keyword or vector.")] = "hybrid",
    min_score: Annotated[
        float | None,
        typer.Option(
            "--min-score",
            help="Relevance floor in [0, 1]; hits below it are left out (default: search.min_score).",
        ),
    ] = None,
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
            min_score=min_score,
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
    if not result:
        sys.stdout.write(f"No memories match {query!r} (relevance floor: see --min-score).\n")
        return
    emit(list(result), Format.table, _COLUMNS, title=f"{len(result)} hits ({result.strategy}), by rank")


_COLUMNS = [
    ("rank", lambda h: str(h.rank)),
    ("layer", lambda h: h.layer),
    ("relevance", lambda h: f"{h.score:.2f}"),
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
    memories = result.prepend_context or "(no memory is relevant to this message: none injected)"
    sys.stdout.write(f"{result.system_context or '(no persona or scenes yet)'}\n\n{memories}\n")
