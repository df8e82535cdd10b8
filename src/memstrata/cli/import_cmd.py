"""``memstrata import FILE``: seed history (seed formats A/B, LoCoMo) and run the pipeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from memstrata.cli.common import DataDir, console, fail_cleanly, open_memory
from memstrata.errors import ValidationError
from memstrata.importers import parse_import

BATCH = 500


def register(app: typer.Typer) -> None:
    app.command("import")(import_file)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def import_file(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="JSON file to import.", exists=True, dir_okay=False)],
    fmt: Annotated[str | None, typer.Option("--format", help="seed or locomo (default: detected).")] = None,
    process: Annotated[
        bool, typer.Option("--process/--no-process", help="Run the pipeline after import.")
    ] = True,
    data_dir: DataDir = None,
) -> None:
    """Import conversation history; re-importing the same file changes nothing."""
    with fail_cleanly():
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValidationError(f"{file} is not valid JSON: {exc}") from None
        sessions = parse_import(data, fmt)
    total = sum(len(s.messages) for s in sessions)
    stored = duplicates = dropped = 0
    with open_memory(ctx, data_dir, flush=process) as mem, _progress() as bar:
        task = bar.add_task("L0 capture", total=total)
        for s in sessions:
            t = s.tenant
            for i in range(0, len(s.messages), BATCH):
                chunk = s.messages[i : i + BATCH]
                r = mem.capture(
                    list(chunk),
                    session_key=s.session_key,
                    session_id=s.session_id,
                    user_id=t.user_id,
                    agent_id=t.agent_id,
                )
                stored, duplicates, dropped = (
                    stored + len(r.stored),
                    duplicates + len(r.duplicates),
                    dropped + len(r.dropped),
                )
                bar.advance(task, len(chunk))
        if process:
            task = bar.add_task("L1 extraction", total=len(sessions))
            for s in sessions:
                mem.end_session(s.session_key, user_id=s.tenant.user_id, agent_id=s.tenant.agent_id)
                bar.advance(task)
            mem.run_all()  # then L2 scenes and L3 personas of every tenant with new atoms
        status = mem.status()
    console.print(
        f"imported {len(sessions)} sessions: {stored} messages stored, {duplicates} already present, "
        f"{dropped} dropped as noise; {status.atoms} memory atoms in store"
    )
    failed = [st for st in status.sessions if st.last_error]
    for st in failed:
        console.print(f"[yellow]pipeline error[/yellow] {st.tenant}/{st.session_key}: {st.last_error}")
    if failed:
        raise typer.Exit(1)
