"""``memstrata import FILE``: seed history (seed formats A/B, LoCoMo) and run the pipeline;
``memstrata import --from-tdai DIR``: migrate a TencentDB-Agent-Memory data directory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from memstrata.cli.common import DataDir, console, fail_cleanly, open_memory, print_degradations
from memstrata.interchange import TdaiImportReport, parse_import
from memstrata.interchange.sessions import ImportReport
from memstrata.models import Status, json_input


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
    file: Annotated[
        Path | None,
        typer.Argument(help="JSON file to import.", exists=True, dir_okay=False, show_default=False),
    ] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="seed or locomo (default: detected).")] = None,
    from_tdai: Annotated[
        Path | None,
        typer.Option(
            "--from-tdai",
            metavar="DIR",
            help="Import a TencentDB-Agent-Memory data directory instead of FILE.",
            exists=True,
            file_okay=False,
        ),
    ] = None,
    from_export: Annotated[
        Path | None,
        typer.Option(
            "--from-export",
            metavar="DIR",
            help="Import a `memstrata export` folder (jsonl or tdai layout) instead of FILE.",
            exists=True,
            file_okay=False,
        ),
    ] = None,
    process: Annotated[
        bool, typer.Option("--process/--no-process", help="Run the pipeline after import.")
    ] = True,
    data_dir: DataDir = None,
) -> None:
    """Import conversation history (FILE), a TencentDB-Agent-Memory data directory (--from-tdai)
    or a memstrata export (--from-export); re-importing the same input changes nothing."""
    given = [x for x in (file, from_tdai, from_export) if x is not None]
    if len(given) != 1:
        raise typer.BadParameter(
            "give exactly one of FILE, --from-tdai DIR or --from-export DIR",
            param_hint="FILE / --from-tdai / --from-export",
        )
    folder = from_tdai or from_export
    if folder is not None:
        if fmt is not None:
            raise typer.BadParameter("applies to FILE only, not to a folder", param_hint="--format")
        _import_tdai(ctx, folder, process, data_dir, export=from_export is not None)
    else:
        assert file is not None
        _import_seed(ctx, file, fmt, process, data_dir)


def _import_seed(
    ctx: typer.Context, file: Path, fmt: str | None, process: bool, data_dir: Path | None
) -> None:
    with fail_cleanly():
        sessions = parse_import(json_input.loads(file.read_bytes(), str(file)), fmt)
    with open_memory(ctx, data_dir, write=True, flush=process) as mem, _progress() as bar:
        tasks: dict[str, TaskID] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done)

        r = mem.import_sessions(sessions, process=process, on_progress=progress)
        status = mem.status()
    console.print(
        f"imported {r.sessions} sessions: {r.stored} messages stored, {r.duplicates} already present, "
        f"{r.dropped} dropped as noise; {status.atoms} memory atoms in store"
    )
    if process:
        console.print(_extraction_line(r))
    for note in r.degradations:
        console.print(f"[yellow]note[/yellow] {escape(note)}", soft_wrap=True)
    print_degradations(status)
    _exit_on_pipeline_errors(status)


def _extraction_line(r: ImportReport) -> str:
    failed = f", {r.failed} failed runs (see below)" if r.failed else ""
    if r.duplicates and not r.stored and not r.atoms:
        # A retried import (a client's retry after a timeout, the same file again): nothing new
        # was stored, so no atom is new either; "extracted 1 sessions into 0 new atoms" read as if
        # extraction had found nothing in them.
        return f"the import was already present (every message stored before): no new atoms{failed}"
    return f"extracted {r.extracted} sessions into {r.atoms} new atoms{failed}"


def _exit_on_pipeline_errors(status: Status) -> None:
    # Every layer's errors, L1 per session and L2/L3 per tenant: each is retried later, but the
    # import did not finish its work, so it says so and exits 1.
    errors = [f"L1 {st.tenant}/{st.session_key}: {st.last_error}" for st in status.sessions if st.last_error]
    errors += [f"L2 {t.tenant}: {t.l2_error}" for t in status.tenants if t.l2_error]
    errors += [f"L3 {t.tenant}: {t.l3_error}" for t in status.tenants if t.l3_error]
    for line in errors:
        console.print(f"[yellow]pipeline error[/yellow] {escape(line)}")
    if errors:
        raise typer.Exit(1)


def _import_tdai(
    ctx: typer.Context, folder: Path, process: bool, data_dir: Path | None, *, export: bool = False
) -> None:
    with open_memory(ctx, data_dir, write=True, flush=process) as mem:
        with console.status(
            "importing the export" if export else "importing the TencentDB-Agent-Memory directory"
        ):
            report = mem.import_export(folder) if export else mem.import_tdai(folder)
        if process:
            with console.status("running the pipeline"):
                mem.run_all()  # atoms of tenants that came without scenes get scenes and a persona
        status = mem.status()
    _print_tdai(folder, report)
    _exit_on_pipeline_errors(status)


def _print_tdai(folder: Path, r: TdaiImportReport) -> None:
    """One line per layer; unwrapped (soft_wrap) so each stays greppable."""
    lines = [
        f"imported {escape(str(folder))}: {r.sessions} sessions",
        f"messages: {r.messages_stored} stored, {r.messages_present} already present, "
        f"{r.messages_dropped} dropped as noise",
        f"memory atoms: {r.atoms_stored} stored, {r.atoms_present} already present",
        f"scenes: {r.scenes_written} written ({r.scenes_renamed} renamed), {r.scenes_present} already present",
        f"personas: {r.personas_written} written, {r.personas_present} already present",
    ]
    if r.skipped:
        lines.append(
            f"[yellow]skipped {len(r.skipped)} unreadable line{'s' if len(r.skipped) != 1 else ''}[/yellow]; "
            f"first: {escape(str(r.skipped[0]))}"
        )
    lines += [f"[yellow]degraded[/yellow] {escape(d)}" for d in r.degradations]
    for line in lines:
        console.print(line, soft_wrap=True)
