"""How ``--help`` reads: value types as people write them (``TEXT``, ``INTEGER``, ``DIR``, ``en|zh``;
nothing after a flag, nor after an argument, whose name says it) instead of typer's ``<str>`` and
``<bool>``, and each description as one flowing paragraph (a docstring's line breaks otherwise
show as lines cut mid-sentence in the command lists).

``PlainHelpGroup`` is the root group's class: typer builds the whole command tree before the
root group, so the root's constructor sees every command and option once."""

from __future__ import annotations

import inspect
import re
from typing import Any

import typer.core
from typer._click import Context

# typer's type labels (``<str>``, ``<int>``) in the words a reader of the help expects.
_WORDS = {
    "str": "TEXT",
    "int": "INTEGER",
    "float": "NUMBER",
    "path": "PATH",
    "file": "FILE",
    "directory": "DIR",
    "datetime": "DATE",
}
_LIST = re.compile(r"^list\[(.*)\]$")


class _PlainArgument(typer.core.TyperArgument):
    """An argument whose type column stays empty: its upper-case name (``QUERY``) says it."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def _usage_display_name(self) -> str:
        """``QUERY`` when required, ``[FILE]`` when not (typer writes ``{QUERY}``)."""
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


class PlainHelpGroup(typer.core.TyperGroup):
    """The root group: every command below it shows plain types and unbroken descriptions."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        plain_help(self)


def plain_help(command: Any) -> None:
    """Rewrite ``command``'s parameters and help, and those of every command below it."""
    command.help = _flowing(command.help)
    command.short_help = _flowing(command.short_help)
    for param in command.params:
        param.help = _flowing(param.help)
        if isinstance(param, typer.core.TyperArgument):
            param.__class__ = _PlainArgument
            param.metavar = param.metavar or (param.name or "value").upper()
        elif isinstance(param, typer.core.TyperOption) and param.metavar is None:
            param.metavar = "" if param.is_flag else type_word(param)
    shown = command.get_help_option(Context(command))  # made once, then cached
    if shown is not None:
        shown.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)


def type_word(option: typer.core.TyperOption) -> str:
    """``TEXT`` for ``<str>``, ``INTEGER`` for ``<int>``, ``en|zh`` for a choice, and so on."""
    label = option.display_type(None).strip("<>")  # type: ignore[arg-type]  # ctx only for choices
    if found := _LIST.match(label):
        label = found.group(1)  # a repeatable option: its help says "repeat for more"
    return _WORDS.get(label, label)


def _flowing(text: str | None) -> str | None:
    """Each paragraph of ``text`` on one line; paragraphs stay apart."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)
