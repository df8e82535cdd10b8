"""Every command's ``--help`` reads as a person wrote it: value types in words (``TEXT``, ``DIR``),
no ``<str>``/``<bool>`` tokens, and every description whole, ending its sentence, on one line of
a wide terminal (a docstring's line break otherwise shows as a line cut mid-sentence)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from memstrata.cli.main import app

runner = CliRunner()
WIDE = {"COLUMNS": "1000", "TERMINAL_WIDTH": "1000"}
TYPE_TOKEN = re.compile(r"<[a-z][\w\[\]|, ]*>")
ENDS_SENTENCE = re.compile(r"[.!?)]$")


def commands(command: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """``(argv path, click command)`` for the root and every command below it."""
    command = command if command is not None else typer.main.get_group(app)
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        if not sub.hidden:
            yield from commands(sub, (*path, name))


ALL = list(commands())


def first_paragraph(text: str | None) -> str:
    return " ".join((text or "").split("\n\n")[0].split())


def shown_help(path: tuple[str, ...]) -> str:
    result = runner.invoke(app, [*path, "--help"], env=WIDE)
    assert result.exit_code == 0, result.output
    return result.output


def lines(output: str) -> list[str]:
    """The help's lines without the panels' borders, spaces squeezed."""
    return [" ".join(line.strip("│╭╮╰╯─ ").split()) for line in output.splitlines()]


@pytest.mark.parametrize(("path", "command"), ALL, ids=lambda p: " ".join(p) if isinstance(p, tuple) else "")
def test_help_shows_no_angle_bracket_types(path: tuple[str, ...], command: Any) -> None:
    found = TYPE_TOKEN.findall(shown_help(path))
    assert found == [], f"memstrata {' '.join(path)} --help shows {found}"


@pytest.mark.parametrize(("path", "command"), ALL, ids=lambda p: " ".join(p) if isinstance(p, tuple) else "")
def test_every_description_is_whole_and_ends_its_sentence(path: tuple[str, ...], command: Any) -> None:
    shown = lines(shown_help(path))
    described = [("the command", first_paragraph(command.help))]
    described += [(p.name, first_paragraph(p.help)) for p in command.params if not p.hidden]
    described += [
        (name, first_paragraph(sub.short_help or sub.help))
        for name, sub in getattr(command, "commands", {}).items()
        if not sub.hidden
    ]
    for what, text in described:
        assert text, f"memstrata {' '.join(path)}: {what} has no description"
        assert ENDS_SENTENCE.search(text), f"memstrata {' '.join(path)}: {what} stops mid-sentence: {text!r}"
        assert any(text in line for line in shown), (
            f"memstrata {' '.join(path)} --help does not show {what}'s description whole on one line: {text!r}"
        )


def test_the_walk_reaches_nested_commands() -> None:
    names = {" ".join(p) for p, _ in ALL}
    assert {"", "search", "inspect l2", "keys create", "demo"} <= names
