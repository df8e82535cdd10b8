"""``memstrata migrate``: copy a whole memory between a data directory and a PostgreSQL database."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from memstrata.cli.common import console, err_console, fail_cleanly
from memstrata.settings import load_settings


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate)


def _where(location: str) -> str | Path:
    return location if "://" in location else Path(location).expanduser()


def migrate(
    source: str = typer.Option(
        ..., "--from", metavar="DIR|URL", help="The memory to copy (opened read-only)."
    ),
    target: str = typer.Option(..., "--to", metavar="DIR|URL", help="An empty data directory or database."),
) -> None:
    """Copy a memory (messages, atoms, vectors, scenes, personas, pipeline state) from a data
    directory to a PostgreSQL database or back, then verify the copy by counts and checksums per
    layer. Stop the source's writers first; the target must be empty."""
    from memstrata.wiring import migrate as copy

    def progress(what: str, done: int) -> None:
        err_console.print(f"{what}: {done}", highlight=False)

    with fail_cleanly():
        report = copy(_where(source), _where(target), load_settings(), progress)
    for line in report.lines():
        console.print(escape(line), soft_wrap=True, highlight=False)
    if not report.ok:
        err_console.print("[red]error:[/red] the copy differs from its source (see the lines above)")
        raise typer.Exit(1)
    console.print("the copy matches its source in every layer")
