"""``memstrata repair``: make the JSONL mirrors and the scene and persona files whole again."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from memstrata.cli.common import DataDir, console, err_console, open_memory, resolve_data_dir


def register(app: typer.Typer) -> None:
    app.command("repair")(repair)


def repair(ctx: typer.Context, data_dir: DataDir = None) -> None:
    """Rewrite JSONL mirrors that disagree with the database; set unreadable scene and persona
    files aside and restore them from their newest readable backup."""
    home = resolve_data_dir(ctx, data_dir)
    if isinstance(home, Path) and not (home / "memstrata.db").is_file():
        err_console.print(
            f"[red]error:[/red] no memstrata data directory at {escape(str(home))} (no memstrata.db)"
        )
        raise typer.Exit(1)
    with open_memory(ctx, home, write=True, embedder=None) as mem:
        done = mem.repair()
    for line in done:
        console.print(escape(line), soft_wrap=True)
    if not done:
        console.print("nothing to repair: the mirrors agree with the database and every file is readable")
