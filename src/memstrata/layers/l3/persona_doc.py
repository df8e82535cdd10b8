"""``persona.md``: a persona body, then a generated scene-navigation section.

The navigation starts at a marker line (an HTML comment). Bodies are escaped before they are
written, and escaping turns every ``<`` that could open a tag or comment into ``&lt;``, so a body
can neither contain the marker nor break out of the XML-like blocks recall wraps it in
(``<user-persona>``, ``<relevant-memories>``, ``<scene-navigation>``, ``<system>``, ...).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.layers.l2.scene_file import format_time, one_line
from memstrata.models import SceneEntry, Tenant
from memstrata.ports import UpperLayers

FILE = "persona.md"  # the persona's one document (in its folder, and on disk)
NAV_MARKER = "<!-- memstrata:scene-navigation (generated after each L2 and L3 run; edits are replaced) -->"
NAV_TITLE = "## Scene navigation"
SCENE_DIR = "scene_blocks"
# "<" opening a tag (<system>, </user-persona>), a comment or declaration (<!--, <!x) or a
# processing instruction (<?x): the forms an XML-ish parser or a model would read as markup.
_TAG_OPEN = re.compile(r"<(?=\s*[/!?A-Za-z])")


def escape_tags(text: str) -> str:
    """``text`` with every tag-opening ``<`` written as ``&lt;``. Idempotent."""
    return _TAG_OPEN.sub("&lt;", text)


def split(text: str) -> tuple[str, str]:
    """``(body, navigation)`` of a persona file; the navigation is what follows the marker line
    (without it), ``""`` when there is none."""
    head, marker, tail = text.partition(NAV_MARKER)
    if not marker:
        return text.strip(), ""
    return head.strip(), tail.strip()


def strip_navigation(text: str) -> str:
    """The persona body alone: everything before the navigation marker."""
    return split(text)[0]


def profile(body: str) -> str:
    """The persona body as a prompt reads it: its sections, without the file's preface (a ``# ``
    title and at most one line naming whom the memories are about, before the first ``## ``
    section: the shape every persona writer gives it). In recall the ``<user-persona>`` block says
    what it is and each section's heading whom it is about, so the preface carries nothing a
    request can use and would only spend the budget the memories share. A body of another shape
    (no title, no section, or a preface of more than one line, which may hold facts) is whole."""
    text = body.strip()
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith("## ")), None)
    if first is None or not lines[0].startswith("# "):
        return text
    if sum(1 for line in lines[1:first] if line.strip()) > 1:
        return text
    return "\n".join(lines[first:])


def render_navigation(entries: Sequence[SceneEntry]) -> str:
    """One block per scene, hottest first (then by name): path, heat, updated, summary."""
    lines = [
        NAV_TITLE,
        "",
        "Details live in the scene files below; read one with `read_scene(path)`.",
    ]
    for e in sorted(entries, key=lambda e: (-e.heat, e.name)):
        summary = escape_tags(one_line(e.summary)) or "(no summary)"
        lines += [
            "",
            f"### {escape_tags(e.name)}",
            f"- path: {SCENE_DIR}/{escape_tags(e.name)}",
            f"- heat: {e.heat}",
            f"- updated: {format_time(e.updated)}",
            f"- summary: {summary}",
        ]
    return "\n".join(lines)


def compose(body: str, entries: Sequence[SceneEntry]) -> str:
    """The persona file: the escaped body, the marker, fresh navigation (none without scenes)."""
    clean = escape_tags(strip_navigation(body)).strip()
    if not entries:
        return clean + "\n"
    return f"{clean}\n\n{NAV_MARKER}\n{render_navigation(entries)}\n"


def refresh_navigation(upper: UpperLayers, tenant: Tenant, entries: Sequence[SceneEntry]) -> None:
    """Rewrite ``persona.md`` with fresh scene navigation (when there is a persona)."""
    found = upper.persona.read(tenant)
    if found is None:
        return
    text = compose(found[0], entries)
    if text != found[0]:
        upper.persona.write(tenant, text)
