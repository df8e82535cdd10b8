"""``memstrata worker``: run the pipeline against a store, in a process of its own (``memstrata.worker``)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from memstrata.cli.common import DataDir, err_console, fail_cleanly, resolve_data_dir
from memstrata.cli.serve_cmd import redact


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)


def worker(
    ctx: typer.Context,
    data_dir_: DataDir = None,
    nice: Annotated[
        int,
        typer.Option("--nice", min=0, max=19, help="Lower the worker's CPU priority by this much (0-19)."),
    ] = 10,
    owner: Annotated[
        int | None,
        typer.Option(
            "--owner",
            metavar="PID",
            help="Join the data directory of the server with this pid, and stop when it stops "
            "(what `memstrata serve` gives the workers it starts).",
        ),
    ] = None,
    ready_fd: Annotated[
        int | None,
        typer.Option("--ready-fd", hidden=True, help="A pipe to say 'ready' on once the store is open."),
    ] = None,
) -> None:
    """Run the pipeline (extraction, embeddings, scenes, persona, retention) until stopped, meeting
    servers only through the store."""
    with fail_cleanly():
        from memstrata import worker as process

        where = resolve_data_dir(ctx, data_dir_)
        shown = redact(where) if isinstance(where, str) else where
        err_console.print(f"memstrata worker on {shown} (pid {os.getpid()})")
        process.main(where, owner if owner is not None else _server_of(where), nice, ready_fd)


def _server_of(where: object) -> int | None:
    """On a data directory a server owns, that server's pid: a worker started by hand joins it."""
    from pathlib import Path

    from memstrata.stores.sqlite.ownership import holder

    if not isinstance(where, Path):
        return None
    from memstrata.worker import alive

    found = holder(where)
    pid = found.get("pid")
    return pid if found.get("url") and isinstance(pid, int) and alive(pid) else None
