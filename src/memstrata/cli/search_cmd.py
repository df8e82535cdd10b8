"""``memstrata search QUERY``: ranked hits from atoms and/or raw messages."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

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
            help=(
                "Relevance floor in [0, 1]; hits below it are left out (default: the store's, "
                "search.query_floor and search.min_score)."
            ),
        ),
    ] = None,
    filters: Annotated[
        list[str] | None,
        typer.Option(
            "--filter",
            help="KEY=VALUE: only records whose metadata has it (VALUE read as JSON when it is a "
            "number, true or false, else text); repeat a key for any of its values.",
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
            filters=metadata_filters(filters or []),
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


def metadata_filters(pairs: list[str]) -> dict[str, Any] | None:
    """``--filter KEY=VALUE`` options as the ``filters`` mapping (a key given twice: ``in``)."""
    wanted: dict[str, list[Any]] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--filter")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        if not isinstance(value, int | float | bool):  # a JSON string, list or null: the text itself
            value = raw
        wanted.setdefault(key, []).append(value)
    if not wanted:
        return None
    return {k: v[0] if len(v) == 1 else {"in": v} for k, v in wanted.items()}


_COLUMNS = [
    ("rank", lambda h: str(h.rank)),
    ("layer", lambda h: h.layer),
    # what the list is sorted by: its fused place (--json: explain.relevance, what the floor cut by)
    ("score", lambda h: f"{h.score:.2f}"),
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
