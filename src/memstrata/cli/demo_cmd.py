"""``memstrata demo``: a bundled conversation through the pipeline, offline, in a temporary folder."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from memstrata.cli.common import Format, console, emit, fail_cleanly
from memstrata.demo import sample
from memstrata.interchange import parse_import
from memstrata.sync import Memory

QUESTIONS = ("Where does Maya work?", "What food should I avoid offering Maya?", "When is Tom moving?")


class Lang(StrEnum):
    """The demo conversation's language."""

    en = "en"
    zh = "zh"


@dataclass(frozen=True, slots=True)
class _Script:
    user_id: str
    session_key: str
    questions: tuple[str, ...]
    prompt: str  # the one recall shown


SCRIPTS = {
    Lang.en: _Script("maya", "chat-maya", QUESTIONS, "Can you suggest a snack for my climbing session?"),
    Lang.zh: _Script(
        "xiaowang",
        "chat-xiaowang",
        ("小王在哪里工作？", "小王对什么过敏？", "小李什么时候搬来深圳？"),
        "去成都出差的时候我可以吃什么？",
    ),
}


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def demo(
    keep: Annotated[
        bool, typer.Option("--keep", help="Keep the data directory afterwards (its path is printed).")
    ] = False,
    folder: Annotated[
        Path | None, typer.Option("--dir", help="Use this folder (it is kept) instead of a temporary one.")
    ] = None,
    lang: Annotated[Lang, typer.Option("--lang", help="The conversation's language: en or zh.")] = Lang.en,
) -> None:
    """Run a small sample conversation through L0 to L3 offline, then search and recall it."""
    started = time.perf_counter()
    home = folder or Path(tempfile.mkdtemp(prefix="memstrata-demo-"))
    try:
        with fail_cleanly():
            sessions = parse_import(sample(lang.value))
            with Memory.open(home) as mem:
                mem.import_sessions(sessions)  # L0 messages, then L1 atoms, L2 scenes, L3 persona
                # After the import: a new store's embedder is chosen by its first messages.
                console.print(f"[dim]embedder: {mem.status().embedder or 'none (keyword search only)'}[/dim]")
                _show(mem, SCRIPTS[lang])
    finally:
        kept = keep or folder is not None
        if not kept:
            shutil.rmtree(home)  # a temporary folder, ours alone
    where = f"data directory: {home}" if kept else "temporary data directory removed (--keep keeps it)"
    console.print(f"\n[dim]{where}  ({time.perf_counter() - started:.1f} s)[/dim]")


def _show(mem: Memory, script: _Script) -> None:
    user = script.user_id
    messages = mem.messages(user_id=user, limit=4)
    console.rule("[bold]L0[/bold] raw messages (first 4)")
    emit(messages, Format.table, [("speaker", lambda m: m.name or m.role), ("content", lambda m: m.content)])
    atoms = mem.atoms(user_id=user, limit=50)
    # Each atom beside the scene file that consolidates it (L2's index), not L1's topic label:
    # the label is a first guess that L2 merges and renames, and shown here it read as drift.
    home = {atom_id: e.name for e in mem.scenes(user_id=user) for atom_id in e.atom_ids}
    console.rule(f"[bold]L1[/bold] memory atoms ({len(atoms)}) and their scenes")
    for a in atoms:
        console.print(escape(f"  [{a.type} · {home.get(a.id, 'no scene yet')}] {a.content}"))
    for q in script.questions:
        result = mem.search(q, user_id=user, layers=("L1", "L0"), limit=3)
        console.rule(f"[bold]search[/bold] {q}  ({result.strategy})")
        for h in result:
            console.print(f"  #{h.rank} {h.layer} score {h.score:.2f}  {h.content}")
        if not result:
            console.print("  (no memory is relevant to this question)")
    scenes = mem.scenes(user_id=user)
    console.rule(f"[bold]L2[/bold] scenes ({len(scenes)})")
    for e in scenes:
        console.print(escape(f"  scene_blocks/{e.name}  heat {e.heat}  {e.summary}"))
    if scenes:
        hottest = max(scenes, key=lambda e: e.heat)
        console.rule(f"[bold]L2[/bold] scene_blocks/{hottest.name}")
        console.print(escape(mem.read_scene(hottest.name, user_id=user).body))
    persona = mem.persona(user_id=user)
    console.rule("[bold]L3[/bold] persona")
    console.print(escape(persona.body if persona else "(no persona yet)"))
    question = script.prompt
    recalled = mem.recall(question, user_id=user, session_key=script.session_key)
    console.rule(f"[bold]recall[/bold] before the prompt: {question}")
    console.print(escape(recalled.system_context.split("<scene-navigation>")[0].strip()))
    console.print(escape(recalled.prepend_context))
    notes = "; ".join(recalled.degradations) or "none"
    console.print(
        f"[dim]strategy {recalled.strategy}, {recalled.timings_ms.get('total', 0):.0f} ms, notes: {notes}[/dim]"
    )
