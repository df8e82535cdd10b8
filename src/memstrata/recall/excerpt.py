"""A scene excerpt for the prompt, when the query lands on one scene strongly.

A scene is a topic document (L2). When most of the best atom hits belong to the same scene, the
question is about that topic as a whole ("what does she do to relax?"), and the scene's own lines
about it say more than the few atoms that ranked: the excerpt is the scene's summary and the body
lines that share the most content words with the query, in the scene's order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memstrata.models import Hit, Layer, SceneEntry
from memstrata.recall.text import cut

TOP_HITS = 10  # the best atom hits that vote for a scene
MIN_VOTES = 3  # votes a scene needs ...
MIN_SHARE = 0.5  # ... and its share of the votes cast


@dataclass(frozen=True, slots=True)
class Excerpt:
    """The scene, its summary and its lines chosen for the query (in the scene's order)."""

    name: str
    summary: str
    lines: tuple[str, ...]

    def render(self, limit: int) -> str:
        """``- [scene <name>] summary: line; line; ...`` within ``limit`` characters."""
        text = f"- [scene {self.name}] {' '.join(self.summary.split())}"
        if self.lines:
            text += ": " + "; ".join(self.lines)
        return cut(text, limit)


def dominant_scene(hits: Sequence[Hit], scenes: Sequence[SceneEntry]) -> SceneEntry | None:
    """The scene holding at least ``MIN_VOTES`` and ``MIN_SHARE`` of the top atom hits, if any."""
    holder = {atom_id: e for e in scenes for atom_id in e.atom_ids}
    atoms = [h for h in hits if h.layer == Layer.L1][:TOP_HITS]
    votes = Counter(holder[h.id].name for h in atoms if h.id in holder)
    if not votes:
        return None
    name, n = votes.most_common(1)[0]
    if n < MIN_VOTES or n < MIN_SHARE * len(atoms):
        return None
    return next(e for e in scenes if e.name == name)


def _body_lines(body: str) -> list[str]:
    """The statements of a scene body: its list items and paragraphs, without headings."""
    out = []
    for raw in body.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "_", "---")):
            continue
        out.append(line.removeprefix("- ").strip())
    return out


def excerpt_for(
    terms: frozenset[str],
    hits: Sequence[Hit],
    scenes: Sequence[SceneEntry],
    read_body: Callable[[str], str | None],
    term_of: Callable[[str], frozenset[str]],
    max_lines: int = 4,
) -> Excerpt | None:
    """The excerpt of the dominant scene: the ``max_lines`` body lines sharing the most of
    ``terms`` (at least one, not counting words on most of its lines, like its person's name), not
    already said by a hit; None without a dominant scene or such lines."""
    scene = dominant_scene(hits, scenes)
    if scene is None:
        return None
    body = read_body(scene.name)
    if not body:
        return None
    shown = {" ".join(h.content.split()) for h in hits}
    lines = _body_lines(body)
    words = [term_of(line) for line in lines]
    df = Counter(w for ws in words for w in ws)
    telling = {w for w in terms if df[w] <= max(1, len(lines) // 2)}  # a word on most lines tells nothing
    scored = []
    for i, line in enumerate(lines):
        overlap = len(telling & words[i])
        if overlap and not any(line in s or s in line for s in shown):
            scored.append((-overlap, i, line))
    best = sorted(sorted(scored)[:max_lines], key=lambda x: x[1])
    if not best:
        return None  # the scene says nothing about the query that the hits do not
    return Excerpt(scene.name, scene.summary, tuple(line for _, _, line in best))
