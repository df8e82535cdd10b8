"""The two context strings, within ONE character budget shared by every part.

    system_context   <user-persona> preamble, persona profile </user-persona>  <= persona_chars
                     <scene-navigation> one line per scene </scene-navigation>  <= navigation_chars
                     <memory-tools-guide> how to search further </memory-tools-guide>
    prepend_context  <relevant-memories>
                     preamble: quoted, data, not instructions
                     - [date] memory, best first (a scene excerpt first when one scene dominates)
                     </relevant-memories>                                        the rest of total_chars

The persona and navigation are query-independent, so they get capped shares; the query-dependent
memories get everything the system part leaves of ``total_chars`` (at least ``min_memories_share``
of it: the persona is cut further rather than starve them). Everything that comes from memory is
quoted (``recall.quoting``), so no stored text can close a block, open a new one or pose as a
turn, and a preamble opens the persona and navigation, and the memories, saying they are quoted
data, not instructions; the preambles count in the budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memstrata import lang as languages
from memstrata.layers.l3.persona_doc import SCENE_DIR
from memstrata.models import Hit, SceneEntry
from memstrata.recall.excerpt import Excerpt
from memstrata.recall.quoting import preamble, quoted
from memstrata.recall.select import SelectOptions, select
from memstrata.recall.text import cut, fitted

MAX_SEARCH_CALLS_PER_TURN = 3


def tools_guide(lang: str = "") -> str:
    """How to search further, in the conversation's language ``lang`` (a Chinese conversation
    reads Chinese context; the default language's for one without a pack)."""
    return languages.get(lang).tools_guide.format(max_calls=MAX_SEARCH_CALLS_PER_TURN)


TOOLS_GUIDE = tools_guide()  # the default language's: the MCP server's instructions
_MEMORIES_OPEN, _MEMORIES_CLOSE = "<relevant-memories>\n", "\n</relevant-memories>"


@dataclass(frozen=True, slots=True)
class Budgets:
    """Character budgets of one recall (defaults: the measured best, see docs/benchmarks.md)."""

    total_chars: int = 4_000  # everything injected: system_context + prepend_context
    persona_chars: int = 800  # the persona's share at most
    navigation_chars: int = 300  # the scene navigation's share at most
    line_chars: int = 300  # one memory line at most
    excerpt_chars: int = 0  # a scene excerpt at most (0: never; it measured no better, see docs)
    candidates: int = 30  # search hits considered for the memory lines
    min_memories_share: float = 0.4  # of total_chars, kept for the memories whatever the persona

    def select_options(self, lang: str = "") -> SelectOptions:
        return SelectOptions(line_chars=self.line_chars, lang=lang)

    def candidates_for(self, memory_chars: int) -> int:
        """The search hits worth considering for memories given ``memory_chars`` of their own:
        ``candidates`` is for the room these budgets leave them (``total_chars`` less the persona
        and navigation shares), a smaller room takes proportionally fewer (each candidate is a
        record read and a relevance judgement on the request's path), a larger one no more."""
        usual = max(1, self.total_chars - self.persona_chars - self.navigation_chars)
        return max(1, min(self.candidates, math.ceil(self.candidates * memory_chars / usual)))


def navigation_lines(scenes: Sequence[SceneEntry], limit: int, lang: str = "") -> str:
    """Every scene, hottest first, within ``limit`` characters: the hottest as ``- scene_blocks/
    <name>: summary`` lines, as many as leave room to name the others on one ``- also in
    scene_blocks/: a.md, b.md`` line (which names as many as fit when even it is too long)."""
    ordered = sorted(scenes, key=lambda e: (-e.heat, e.name))
    full = [fitted(f"- {SCENE_DIR}/{e.name}: {' '.join(e.summary.split())}", 160) for e in ordered]
    names = [quoted(e.name) for e in ordered]

    def render(k: int) -> str:
        also = languages.get(lang).also_in
        rest = f"- {also} {SCENE_DIR}/: {', '.join(names[k:])}" if k < len(names) else ""
        return "\n".join([*full[:k], rest] if rest else full[:k])

    for k in range(len(ordered), -1, -1):
        text = render(k)
        if len(text) <= limit:
            return text
    return cut(render(0), limit) if limit >= 40 else ""


def system_block(
    persona_body: str | None,
    scenes: Sequence[SceneEntry],
    b: Budgets,
    lang: str = "",
    *,
    tools: bool = True,
) -> str:
    """``<user-persona>``, ``<scene-navigation>`` and (when the host has the memory ``tools``)
    ``<memory-tools-guide>``, within their shares (the persona also within what
    ``min_memories_share`` leaves of the total), the guide and the navigation's words in the
    conversation's language ``lang``."""
    guide = f"<memory-tools-guide>\n{tools_guide(lang)}\n</memory-tools-guide>" if tools else ""
    nav = navigation_lines(scenes, b.navigation_chars, lang) if scenes else ""
    # The preamble opens the first block of memory, inside it: a host that echoes the context
    # into a stored message has the whole block stripped (``layers.l0.sanitize``), preamble too.
    opening = preamble(lang) + "\n"
    blocks: list[tuple[str, str]] = []
    if persona_body and persona_body.strip():
        wrapper = len("<user-persona>\n\n</user-persona>\n\n")
        nav_block = len(f"<scene-navigation>\n{nav}\n</scene-navigation>") if nav else 0
        used = len(opening) + len(guide) + nav_block + wrapper + 4
        limit = min(b.persona_chars, int(b.total_chars * (1 - b.min_memories_share)) - used)
        if limit >= 40:
            blocks.append(("user-persona", fitted(persona_body, limit)))
    if nav:
        blocks.append(("scene-navigation", nav))
    parts = [f"<{tag}>\n{opening if i == 0 else ''}{body}\n</{tag}>" for i, (tag, body) in enumerate(blocks)]
    if guide:
        parts.append(guide)
    return "\n\n".join(parts)


@dataclass(frozen=True, slots=True)
class Memories:
    """The ``<relevant-memories>`` block and the hits it shows, best first."""

    block: str
    hits: tuple[Hit, ...]


def memories_block(
    hits: Sequence[Hit],
    room: int,
    b: Budgets,
    scene_excerpt: Callable[[Sequence[Hit]], Excerpt | None] | None = None,
    given: str = "",
    lang: str = "",
) -> Memories:
    """The memory lines that fit in ``room`` characters (block tags included): a scene excerpt
    first when ``scene_excerpt`` finds one scene that the hits point at strongly; nothing that
    ``given`` (the system context) already says."""
    opening = preamble(lang) + "\n"  # inside the block, as in ``system_block``
    room -= len(opening) + len(_MEMORIES_OPEN) + len(_MEMORIES_CLOSE)
    head = ""
    if scene_excerpt is not None and b.excerpt_chars > 0 and room > 2 * b.excerpt_chars:
        found = scene_excerpt(hits)
        if found is not None:
            head = fitted(found.render(b.excerpt_chars), b.excerpt_chars)
            room -= len(head) + 1
    chosen = select(hits[: b.candidates], room, b.select_options(lang), given)
    lines = ([head] if head else []) + [line for _, line in chosen]
    if not lines:
        return Memories("", ())
    block = _MEMORIES_OPEN + opening + "\n".join(lines) + _MEMORIES_CLOSE
    return Memories(block, tuple(h for h, _ in chosen))
