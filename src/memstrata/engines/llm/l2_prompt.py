"""The L2 consolidation prompt: fold a batch of atoms into the scene files with file tools.

Input: a ``ConsolidationRequest`` (the batch, the current scenes). Output: tool calls on
``scene_blocks/`` (see ``tool_loop``) and a final one-line answer, which may carry
``[PERSONA_UPDATE_REQUEST]reason[/PERSONA_UPDATE_REQUEST]``.
"""

from __future__ import annotations

from memstrata.engines.llm.language import language_line
from memstrata.layers.l2.scene_file import META_END, META_START, format_time
from memstrata.models import Atom, ChatMessage
from memstrata.ports import ConsolidationRequest

ATOM_CHARS = 500

SYSTEM = f"""You maintain the scene documents of a long-term memory: Markdown files in scene_blocks/, \
one per topic of the person's life (for example family.md, work.md, hiking.md). You receive new \
memory atoms and fold them into the scenes with the file tools.

Each file has this exact format:
{META_START}
created: YYYY-MM-DD HH:MM
updated: YYYY-MM-DD HH:MM
summary: one line that says what the scene covers
heat: N
{META_END}

<Markdown body>

The system maintains created, updated and heat; you write the summary line and the body.

Rules:
1. Update an existing scene by default: read it, then edit_file (or write_file the whole text). \
Put each new fact in the right section; keep older facts unless a new atom corrects them.
2. Create at most ONE new scene in this batch, and only for a topic no scene covers.
3. There may be at most {{max_scenes}} scenes. At the limit, when a new topic needs its own scene, \
first merge 2-4 similar scenes into one and delete the others by writing exactly [DELETED] as their content.
4. Body: a short lead paragraph, then the sections that apply: "## Profile" (lasting facts), \
"## Preferences", "## Timeline" (dated events as "- **YYYY-MM-DD** what happened", oldest first), \
"## Instructions". Name people instead of writing "the user"; write dates out; no XML or HTML tags.
5. File names: lowercase words joined by hyphens, ending in .md.
6. Write the summary and the body in the language the memory atoms are written in (Chinese atoms \
make a Chinese scene); never translate names, places or quotes.
7. When a change matters for the person's overall profile (identity, relationships, work, values, \
a standing instruction), end your final answer with \
[PERSONA_UPDATE_REQUEST]one-line reason[/PERSONA_UPDATE_REQUEST].
When you are done, answer with one line saying what you changed, and call no tool."""


def atom_line(a: Atom) -> str:
    """``- [id] (type, priority P, said YYYY-MM-DD HH:MM) content``, content capped."""
    said = a.metadata.get("message_time")
    when = format_time(int(said)) if isinstance(said, int | float) else format_time(a.created_at)
    text = " ".join(a.content.split())
    if len(text) > ATOM_CHARS:
        text = text[: ATOM_CHARS - 1] + "…"
    extra = ""
    start, end = a.metadata.get("activity_start"), a.metadata.get("activity_end")
    if start:
        extra = f", happened {start}" + (f" to {end}" if end and end != start else "")
    return f"- [{a.id}] ({a.type}, priority {a.priority}, said {when}{extra}) {text}"


def consolidation_messages(request: ConsolidationRequest) -> list[ChatMessage]:
    """The system rules and the batch: current scenes (name, summary, heat) and the new atoms."""
    scenes = sorted(request.scenes, key=lambda s: (-s.heat, s.name))
    if scenes:
        listing = "\n".join(f"- scene_blocks/{s.name} (heat {s.heat}): {s.summary}" for s in scenes)
        head = f"Current scenes ({len(scenes)} of at most {request.max_scenes}):\n{listing}"
    else:
        head = f"There are no scenes yet (at most {request.max_scenes})."
    atoms = "\n".join(atom_line(a) for a in request.atoms)
    language = language_line(a.content for a in request.atoms).replace("memory", "scene text")
    user = f"{language}{head}\n\nNew memory atoms to consolidate ({len(request.atoms)}):\n{atoms}"
    if rewrite := _rewrite_section(request):
        user += rewrite
    return [
        ChatMessage("system", SYSTEM.replace("{max_scenes}", str(request.max_scenes))),
        ChatMessage("user", user),
    ]


def _rewrite_section(request: ConsolidationRequest) -> str:
    """Scenes that lost memories (deleted on purpose): they are empty now and must be written again
    from the memories they still hold, and nothing else."""
    parts = []
    for name in request.rewrite:
        held = request.members.get(name, ())
        if held:
            lines = "\n".join(atom_line(a) for a in held)
            parts.append(f"scene_blocks/{name} (write it again from these {len(held)} memories):\n{lines}")
    if not parts:
        return ""
    return (
        "\n\nSome memories were deleted on purpose. These scenes were emptied; write each one again "
        "from the memories listed for it ONLY (a summary line and a body), adding nothing else:\n"
        + "\n".join(parts)
    )
