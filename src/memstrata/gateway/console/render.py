"""The console's templates (Jinja2, autoescaped) and the filters they use: times, sizes and
Markdown. Markdown is rendered with raw HTML off, so a scene or persona (text an LLM or a user
wrote) can show formatting but never inject markup or script into the page."""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

from memstrata.gateway.console.urls import tenant_url

_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def when(ms: int | None) -> str:
    """An epoch-ms time as ``2026-03-02 09:00 UTC`` ('-' for none)."""
    if not ms:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def day(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")


def markdown(text: str | None) -> Markup:
    """Markdown to HTML with raw HTML escaped (markdown-it's ``html`` option off)."""
    return Markup(_MARKDOWN.render(text or ""))  # markdown-it escaped every raw tag


def size(text: str | None) -> str:
    """A text's size as people read it: characters, and UTF-8 bytes when they differ."""
    chars, raw = len(text or ""), len((text or "").encode())
    return f"{chars:,} chars" if raw == chars else f"{chars:,} chars, {raw:,} bytes"


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``22nd``: a place in a list."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@functools.cache
def templates() -> Environment:
    env = Environment(
        loader=PackageLoader("memstrata.gateway.console", "templates"),
        autoescape=select_autoescape(("html",)),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(when=when, day=day, markdown=markdown, size=size, ordinal=ordinal)
    env.globals["tenant_url"] = tenant_url
    env.filters["q"] = lambda text: quote(str(text), safe="")  # an id as one path segment
    return env
