"""The ``memstrata`` command: one module per command group, each command a thin edge."""

from __future__ import annotations

import logging
from importlib.metadata import version as package_version
from pathlib import Path

import typer

from memstrata.cli import (
    demo_cmd,
    forget_cmd,
    import_cmd,
    inspect_cmd,
    keys_cmd,
    maintenance_cmd,
    mcp_cmd,
    migrate_cmd,
    remember_cmd,
    repair_cmd,
    search_cmd,
    serve_cmd,
    worker_cmd,
)
from memstrata.cli.common import DataDir
from memstrata.cli.help import PlainHelpGroup

app = typer.Typer(
    name="memstrata",
    cls=PlainHelpGroup,
    help="Layered long-term memory for LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"memstrata {package_version('memstrata')}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    data_dir: DataDir = None,
    store: str | None = typer.Option(
        None,
        "--store",
        metavar="URL",
        help="A PostgreSQL database (postgresql://user:password@host:port/db) instead of a data "
        "directory (default: $MEMSTRATA_STORE__URL, else the data directory).",
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log pipeline activity to stderr."),
    wait: float = typer.Option(
        0.0,
        "--wait",
        metavar="SECONDS",
        min=0,
        help="Wait this long for another writer of the data directory.",
    ),
    url: str | None = typer.Option(
        None,
        "--url",
        envvar="MEMSTRATA_URL",
        help="Work through a running `memstrata serve` at this URL (its key: $MEMSTRATA_API_KEY).",
    ),
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_print_version, help="Print the version and exit."
    ),
) -> None:
    """Layered long-term memory for LLM agents."""
    if store and data_dir:
        raise typer.BadParameter("give --store or --data-dir, not both", param_hint="--store")
    where = store or (Path(data_dir).expanduser() if data_dir else None)
    ctx.obj = {"data_dir": where, "wait": wait, "url": url}
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )


import_cmd.register(app)
search_cmd.register(app)
remember_cmd.register(app)
maintenance_cmd.register(app)
repair_cmd.register(app)
migrate_cmd.register(app)
forget_cmd.register(app)
demo_cmd.register(app)
serve_cmd.register(app)
worker_cmd.register(app)
mcp_cmd.register(app)
app.add_typer(inspect_cmd.app, name="inspect")
app.add_typer(keys_cmd.app, name="keys")


def run() -> None:
    app()
