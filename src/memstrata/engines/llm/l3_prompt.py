"""The L3 persona prompt: write or update ``persona.md`` with file tools.

Input: a ``PersonaRequest`` (mode, current body, changed scenes, other scene summaries, the
highest-priority persona and instruction atoms). Output: tool calls on ``persona.md`` only, then a
final one-line answer. The system appends the scene navigation afterwards.
"""

from __future__ import annotations

from memstrata.engines.llm.l2_prompt import atom_line
from memstrata.models import ChatMessage, PersonaRequest

SCENE_CHARS = 4000
CHANGED_SCENES = 6

SYSTEM = """You write persona.md: a concise profile of the person (or people) this memory is about, \
which an AI assistant reads before every conversation. Use the file tools on persona.md only.

Write Markdown: a title; a short paragraph that names the person and says who they are; then the \
sections that apply, such as "## Identity and background", "## Relationships", \
"## Work and education", "## Interests and preferences", "## Habits and plans", \
"## Instructions for the assistant". Prefer lasting facts to one-off events; keep dates where they \
matter; stay under about 600 words. No XML or HTML tags. Do not write a scene navigation: the system \
appends it.
When you are done, answer with one line saying what you changed, and call no tool."""

FIRST = "There is no persona yet: write persona.md with write_file."
INCREMENTAL = (
    "Update the persona: use edit_file for targeted changes (write_file to restructure); keep what is "
    "still true and correct what changed."
)


def persona_messages(request: PersonaRequest) -> list[ChatMessage]:
    """The system rules and what to write from."""
    changed = [s for s in request.scenes if s.name in request.changed][:CHANGED_SCENES]
    others = [s for s in request.scenes if s not in changed]
    parts = [FIRST if request.first else INCREMENTAL]
    if request.reasons:
        parts.append("Why now: " + "; ".join(request.reasons))
    if not request.first:
        parts.append(f"Current persona.md:\n{request.current}")
    if changed:
        parts.append(
            "Scenes changed since the last persona:\n"
            + "\n\n".join(f"### scene_blocks/{s.name}\n{s.body[:SCENE_CHARS]}" for s in changed)
        )
    if others:
        parts.append("Other scenes:\n" + "\n".join(f"- scene_blocks/{s.name}: {s.summary}" for s in others))
    if request.atoms:
        parts.append("Highest-priority memories:\n" + "\n".join(atom_line(a) for a in request.atoms))
    return [ChatMessage("system", SYSTEM), ChatMessage("user", "\n\n".join(parts))]
