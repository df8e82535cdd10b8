"""The JSON action protocol: file tools for a server without tool calling.

A server that refuses ``tools`` (no tool-calling template) still answers text, so the tool loop
describes its tools in the prompt and asks for one JSON action per reply::

    {"tool": "write_file", "arguments": {"path": "work.md", "content": "..."}}
    {"tool": "done", "arguments": {}, "summary": "added Ann's new job to work.md"}

The reply's schema (``action_schema``: the tool names and their argument names) is sent too: a
server with structured outputs then cannot answer anything else. Each result comes back as a user message ``TOOL RESULT (name): ...``. Small models on
servers that do have tool calling sometimes write such an action as text as well; the loop
reads those the same way (``actions_in``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from memstrata.engines.llm.parsing import parse_json
from memstrata.errors import ParseError
from memstrata.models import ResponseSchema, ToolCall, ToolSpec

DONE = "done"
_ids = itertools.count()


class Action(BaseModel):
    """One step of the loop as the model writes it."""

    tool: str = Field(description="the tool to run, or 'done' when nothing is left to do")
    arguments: dict[str, Any] = Field(default_factory=dict, description="the tool's arguments")
    summary: str = Field("", description="with 'done': one line saying what you changed")


def action_schema(specs: tuple[ToolSpec, ...]) -> ResponseSchema:
    """``Action``'s schema with ``tool`` one of ``specs``' names or ``done`` and ``arguments`` only
    their argument names: a server with structured outputs then cannot answer a tool that does
    not exist (a 270M model, unbound, called a ``person`` tool with a made-up profile)."""
    schema = Action.model_json_schema()
    names = [spec.name for spec in specs]
    arguments: dict[str, Any] = {}
    for spec in specs:
        arguments.update(spec.parameters.get("properties", {}))
    schema["properties"]["tool"] = {**schema["properties"]["tool"], "enum": [*names, DONE]}
    schema["properties"]["arguments"] = {
        "type": "object",
        "description": schema["properties"]["arguments"].get("description", ""),
        "properties": arguments,
        "additionalProperties": False,
    }
    schema["properties"]["summary"] = {**schema["properties"]["summary"], "maxLength": 300}
    schema["required"] = ["tool", "arguments"]
    return ResponseSchema("file_tool_action", schema)


def guide(specs: tuple[ToolSpec, ...]) -> str:
    """The protocol's instructions, appended to the system prompt: the tools and their arguments."""
    lines = [
        "",
        "This server has no tool calling: you call a tool by answering with ONE JSON object and "
        'nothing else: {"tool": "<name>", "arguments": {...}}. The next message gives its result. '
        'When you are done, answer {"tool": "done", "arguments": {}, "summary": "<what you changed>"}.',
        "Tools:",
    ]
    for spec in specs:
        props = spec.parameters.get("properties", {})
        args = ", ".join(f'"{name}": {_describe(p)}' for name, p in props.items()) if props else ""
        lines.append(f"- {spec.name}: {spec.description} arguments: {{{args}}}")
    return "\n".join(lines)


def actions_in(text: str, names: set[str]) -> tuple[list[ToolCall], str | None] | None:
    """The tool calls and the final summary a reply's text holds, or None when it holds no action.

    A list of actions is run in order. ``done`` ends the loop (its summary is returned); an
    unknown tool name is kept, so the loop answers it with an error the model can correct.
    """
    try:
        data = parse_json(text)
    except ParseError:
        return None
    items = data if isinstance(data, list) else [data]
    calls: list[ToolCall] = []
    summary: str | None = None
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("tool"), str):
            continue
        name = item["tool"].strip()
        if name == DONE:
            summary = str(item.get("summary") or "")
            break
        arguments = item.get("arguments")
        if arguments is None:  # some models put the arguments beside the tool name
            arguments = {k: v for k, v in item.items() if k != "tool"}
        calls.append(ToolCall(f"text_{next(_ids)}", name, json.dumps(arguments, ensure_ascii=False)))
    if not calls and summary is None:
        return None
    if calls and not any(c.name in names for c in calls) and summary is None:
        return None  # JSON about something else (e.g. a scene's content), not an action
    return calls, summary


def _describe(prop: Any) -> str:
    if isinstance(prop, Mapping):
        return f"<{prop.get('type', 'value')}: {prop.get('description', '')}>".replace(": >", ">")
    return "<value>"
