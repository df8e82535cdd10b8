"""Shared CLI pieces: the data-dir option, opening memory, output formats, error handling."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memstrata.errors import MemstrataError
from memstrata.models import Status
from memstrata.operations import BlockingMemoryApi
from memstrata.settings import load_settings
from memstrata.sync import Memory

console = Console()
err_console = Console(stderr=True)

DataDir = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Data directory (default: $MEMSTRATA_HOME or ~/.memstrata)."),
]
User = Annotated[str, typer.Option("--user", help="Tenant user id.")]
Agent = Annotated[str, typer.Option("--agent", help="Tenant agent id.")]


class Format(StrEnum):
    table = "table"
    json = "json"
    jsonl = "jsonl"


def data_dir(ctx: typer.Context, local: Path | str | None) -> Path | str | None:
    """The command's --data-dir, else the data directory or store URL given before the command."""
    if local is not None:
        return local
    root = ctx.find_root().obj
    return root.get("data_dir") if isinstance(root, dict) else None


def resolve_data_dir(ctx: typer.Context, local: Path | None) -> Path | str:
    """Where a command works: its option, the global one (a data directory or a store URL), else
    the settings' store URL or home."""
    settings = load_settings()
    where = data_dir(ctx, local) or settings.store.url or settings.home
    return where if isinstance(where, Path) or "://" in where else Path(where).expanduser()


def wait_seconds(ctx: typer.Context) -> float:
    root = ctx.find_root().obj
    return float(root.get("wait") or 0.0) if isinstance(root, dict) else 0.0


def server_url(ctx: typer.Context) -> str | None:
    """The server given with ``--url`` (or ``$MEMSTRATA_URL``) before the command."""
    root = ctx.find_root().obj
    url = root.get("url") if isinstance(root, dict) else None
    return str(url) if url else None


@contextmanager
def open_memory(
    ctx: typer.Context, local: Path | str | None, *, write: bool, flush: bool = True, **kwargs: Any
) -> Iterator[BlockingMemoryApi]:
    """The memory of the command's data directory: as its one writer (``write``; waiting up to
    ``--wait`` seconds for another writer), or read-only (no lock, nothing written). With
    ``--url``, the server's memory instead (the way to work on a directory a server holds: its
    ``DirectoryLockedError`` names the URL)."""
    url = server_url(ctx)
    with fail_cleanly():
        if url is not None:
            mem = Memory.open(url)
        elif write:
            mem = Memory.open(data_dir(ctx, local), wait=wait_seconds(ctx), **kwargs)
        else:
            mem = Memory.open(data_dir(ctx, local), read_only=True, **kwargs)
    try:
        with fail_cleanly():
            yield mem
    finally:
        with fail_cleanly():
            mem.close(flush=flush)


@contextmanager
def fail_cleanly() -> Iterator[None]:
    """memstrata errors become one red line and exit code 1, not a traceback."""
    try:
        yield
    except MemstrataError as exc:
        # One line whatever the terminal's width (paths are long), the message never read as markup.
        err_console.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None


_AGO = re.compile(r"^(\d+)([smhdw])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(value: str | None) -> int | None:
    """``7d``, ``12h``, ``30m`` ago, or an ISO date/time; returns epoch ms."""
    if value is None:
        return None
    if m := _AGO.match(value.strip()):
        return int((time.time() - int(m.group(1)) * _UNIT[m.group(2)]) * 1000)
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r}: use e.g. 7d, 12h, 30m or an ISO date") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)


def iso(ms: int | None) -> str:
    if ms is None:
        return ""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def plain(record: object) -> Any:
    """A JSON-ready form of a record (dataclasses, enums, tuples)."""
    if is_dataclass(record) and not isinstance(record, type):
        return {k: plain(v) for k, v in asdict(record).items()}
    if isinstance(record, dict):
        return {str(k): plain(v) for k, v in record.items()}
    if isinstance(record, list | tuple):
        return [plain(v) for v in record]
    if isinstance(record, StrEnum):
        return str(record)
    return record


def emit(
    records: Sequence[object],
    fmt: Format,
    columns: Sequence[tuple[str, Callable[[Any], object]]],
    title: str = "",
) -> None:
    if fmt == Format.json:
        sys.stdout.write(json.dumps([plain(r) for r in records], ensure_ascii=False, indent=2) + "\n")
        return
    if fmt == Format.jsonl:
        for r in records:
            sys.stdout.write(json.dumps(plain(r), ensure_ascii=False) + "\n")
        return
    table = Table(title=title or None, show_lines=False)
    for name, _ in columns:
        table.add_column(name, overflow="fold")
    for r in records:
        table.add_row(*(str(get(r)) for _, get in columns))
    console.print(table)


def print_degradations(status: Status) -> None:
    """One line naming what the engines got by without (status and import show it)."""
    if status.degradations:
        counts = ", ".join(f"{name} {count}" for name, count in status.degradations.items())
        console.print(f"[yellow]degraded[/yellow] engine: {counts}", soft_wrap=True)
