"""The L3 persona prompt: write or update ``persona.md`` with file tools.

Input: a ``PersonaRequest`` (mode, current body, changed scenes, other scene summaries, the
highest-priority persona and instruction atoms) and the body's character budget. Output: tool
calls on ``persona.md`` only, then a final one-line answer. The system appends the scene
navigation afterwards. The shape asked for is the offline writer's: a profile of standing facts
per person, by section, most telling first, dated where they change, within the budget.
"""

from __future__ import annotations

from memstrata.engines.llm.l2_prompt import atom_line
from memstrata.engines.llm.language import language_line
from memstrata.models import ChatMessage
from memstrata.ports import PersonaRequest

SCENE_CHARS = 4000
CHANGED_SCENES = 6

SYSTEM = """You write persona.md: a profile of the person (or people) this memory is about, which \
an AI assistant reads before every conversation. Use the file tools on persona.md only.

A profile, not a log: the standing facts that stay true, not what happened. Write Markdown: the \
title "# Persona", one line naming who the memories are about, then for each person a heading \
"## <name>" and one bullet per section that applies, in this order: "Health" (allergies, diet, \
conditions), "Work and education", "Home", "Family and relationships" (who is who, with names), \
"Pets" (with names), "Identity", "Likes" (preferences, favourites), "Plans" (standing plans still \
to come, with their dates). In a bullet, join short facts with "; ". Put the most telling facts \
first, say each fact once, and add the month and year to a fact that can change (a job, a home, a \
relationship): "works as a nurse at the city hospital (May 2023)". One-off events (a trip, a \
party, a bad day) belong in the scenes, not here. End with "## Instructions for the assistant", \
listing every standing instruction. Write in the language the scenes and memories are written in \
(translate the headings too: a Chinese profile has Chinese headings), never translating names or \
places. Stay within {max_chars} characters. No XML or HTML tags. Do \
not write a scene navigation: the system appends it.
When you are done, answer with one line saying what you changed, and call no tool."""

FIRST = "There is no persona yet: write persona.md with write_file."
INCREMENTAL = (
    "Update the persona: use edit_file for targeted changes (write_file to restructure); keep what is "
    "still true and correct what changed."
)


def persona_messages(request: PersonaRequest, max_chars: int = 800) -> list[ChatMessage]:
    """The system rules (with the body's character budget) and what to write from."""
    changed = [s for s in request.scenes if s.name in request.changed][:CHANGED_SCENES]
    others = [s for s in request.scenes if s not in changed]
    language = language_line([*(s.body for s in changed), *(a.content for a in request.atoms)])
    parts = [language.replace("every memory", "persona.md").strip()] if language else []
    parts.append(FIRST if request.first else INCREMENTAL)
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
    return [
        ChatMessage("system", SYSTEM.format(max_chars=max_chars)),
        ChatMessage("user", "\n\n".join(parts)),
    ]
