"""The file-tool loop the LLM engine runs for L2 and L3.

The model gets four tools over a ``Sandbox``: ``list_files``, ``read_file``, ``write_file`` and
``edit_file`` (exact-substring replacement). Each tool call is one step; a refused call (bad path,
too big, bad arguments) is answered with ``error: ...`` so the model can correct itself, and still
counts. The loop ends when the model answers without tool calls, after ``max_steps`` steps (what
was written stays), or raises ``EngineError`` when ``time_limit`` seconds pass.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field, ValidationError

from memstrata import json_input
from memstrata.engines.llm.sandbox import Sandbox
from memstrata.errors import EngineError, InputError
from memstrata.models import ChatMessage, ToolCall, ToolSpec
from memstrata.ports import ChatModel

log = logging.getLogger(__name__)
_REQUEST = re.compile(r"\[PERSONA_UPDATE_REQUEST\](.*?)\[/PERSONA_UPDATE_REQUEST\]", re.DOTALL)


class PathArgs(BaseModel):
    path: str = Field(description="file name, e.g. scene_blocks/family.md")


class WriteArgs(PathArgs):
    content: str = Field(description="the whole new file text")


class EditArgs(PathArgs):
    old_text: str = Field(description="text to replace: must occur exactly once in the file")
    new_text: str = Field(description="the replacement text")


class NoArgs(BaseModel):
    pass


_TOOLS: dict[str, tuple[str, type[BaseModel]]] = {
    "list_files": ("List the files you may use, with their size and summary.", NoArgs),
    "read_file": ("Read a whole file.", PathArgs),
    "write_file": ("Create a file or replace all of its text.", WriteArgs),
    "edit_file": ("Replace one exact occurrence of old_text with new_text in a file.", EditArgs),
}
TOOL_SPECS = tuple(
    ToolSpec(name, description, model.model_json_schema()) for name, (description, model) in _TOOLS.items()
)


@dataclass(slots=True)
class LoopResult:
    """What the loop did: the model's texts (all turns), steps taken, files written."""

    texts: list[str] = field(default_factory=list)
    steps: int = 0
    written: list[str] = field(default_factory=list)
    stopped: bool = False  # hit the step limit


def persona_requests(texts: Sequence[str]) -> tuple[str, ...]:
    """Reasons in ``[PERSONA_UPDATE_REQUEST]reason[/PERSONA_UPDATE_REQUEST]`` blocks, in order."""
    return tuple(" ".join(m.split()) or "scene writer request" for t in texts for m in _REQUEST.findall(t))


def call_tool(sandbox: Sandbox, call: ToolCall) -> str:
    """Run one tool call; refusals and bad arguments become ``error: ...`` texts."""
    spec = _TOOLS.get(call.name)
    if spec is None:
        return f"error: unknown tool {call.name!r}; use one of {', '.join(_TOOLS)}"
    try:
        args = spec[1].model_validate(json_input.loads(call.arguments or "{}"))
    except (InputError, ValidationError) as exc:
        return f"error: bad arguments for {call.name}: {str(exc)[:300]}"
    try:
        if isinstance(args, EditArgs):
            return sandbox.edit(args.path, args.old_text, args.new_text)
        if isinstance(args, WriteArgs):
            return sandbox.write(args.path, args.content)
        if isinstance(args, PathArgs):
            return sandbox.read(args.path)
        return sandbox.list_files()
    except InputError as exc:
        return f"error: {exc.message}"
    except OSError as exc:
        return f"error: {exc.strerror or exc}"


async def run_tools(
    model: ChatModel,
    messages: Sequence[ChatMessage],
    sandbox: Sandbox,
    *,
    max_steps: int,
    time_limit: float,
) -> LoopResult:
    """Drive the model until it stops calling tools. Raises ``ModelError`` (from the model) and
    ``EngineError`` on timeout."""
    result = LoopResult()
    try:
        async with asyncio.timeout(time_limit):
            await _loop(model, list(messages), sandbox, max_steps, result)
    except TimeoutError:
        raise EngineError(f"the tool loop did not finish within {time_limit:g} s") from None
    result.written = list(sandbox.written)
    return result


async def _loop(
    model: ChatModel, history: list[ChatMessage], sandbox: Sandbox, max_steps: int, result: LoopResult
) -> None:
    while True:
        reply = await model.complete(history, tools=TOOL_SPECS)
        history.append(ChatMessage("assistant", reply.content, tool_calls=reply.tool_calls))
        result.texts.append(reply.content)
        if not reply.tool_calls:
            return
        for call in reply.tool_calls:
            if result.steps >= max_steps:
                answer = "error: tool step limit reached; this call was not run"
            else:
                result.steps += 1
                answer = await asyncio.to_thread(call_tool, sandbox, call)
            history.append(ChatMessage("tool", answer, tool_call_id=call.id))
        if result.steps >= max_steps:
            log.warning("tool loop stopped after %d steps; keeping what was written", result.steps)
            result.stopped = True
            return
