"""``memstrata repair``: make the JSONL mirrors and the scene and persona files whole again."""

from __future__ import annotations

import typer
from rich.markup import escape

from memstrata.cli.common import DataDir, console, data_dir, fail_cleanly
from memstrata.settings import load_settings
from memstrata.stores.repair import repair_data_dir


def register(app: typer.Typer) -> None:
    app.command("repair")(repair)


def repair(ctx: typer.Context, data_dir_option: DataDir = None) -> None:
    """Rewrite JSONL mirrors that disagree with the database; set unreadable scene and persona
    files aside and restore them from their newest readable backup."""
    with fail_cleanly():
        home = data_dir(ctx, data_dir_option) or load_settings().home
        report = repair_data_dir(home)
    for line in report.lines():
        console.print(escape(line), soft_wrap=True)
    if not report.lines():
        console.print("nothing to repair: the mirrors agree with the database and every file is readable")
