"""The file-tool loop the LLM engine runs for L2 and L3.

The model gets four tools over a ``Sandbox``: ``list_files``, ``read_file``, ``write_file`` and
``edit_file`` (exact-substring replacement). Each tool call is one step; a refused call (bad path,
too big, bad arguments) is answered with ``error: ...`` so the model can correct itself, and still
counts (as a step, and in ``degradations`` as ``tool_call_errors``). The loop ends when the model
answers without tool calls, after ``max_steps`` steps (what was written stays), or raises
``EngineError`` when ``time_limit`` seconds pass.

``protocol`` says how tools are called: ``native`` (the server's tool calling), ``json`` (the JSON
action protocol of ``json_actions``, for servers without it) or ``auto`` (native, switching to
JSON for good when the server refuses ``tools``; counted as ``tool_protocol_json``). An action
written as text in a native loop is run too (counted as ``text_tool_calls``).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from memstrata.engines.llm import json_actions
from memstrata.engines.llm.sandbox import Sandbox
from memstrata.errors import EngineError, InputError, ToolsUnsupportedError
from memstrata.models import ChatMessage, ChatReply, Degradations, ToolCall, ToolSpec, json_input
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
ACTION_SCHEMA = json_actions.action_schema(TOOL_SPECS)
Protocol = Literal["auto", "native", "json"]


@dataclass(slots=True)
class LoopResult:
    """What the loop did: the model's texts (all turns), steps taken, files written."""

    texts: list[str] = field(default_factory=list)
    steps: int = 0
    written: list[str] = field(default_factory=list)
    stopped: bool = False  # hit the step limit
    protocol: Protocol = "auto"  # "json" once the loop spoke the JSON action protocol


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
    protocol: Protocol = "auto",
    counts: Degradations | None = None,
) -> LoopResult:
    """Drive the model until it stops calling tools. Raises ``ModelError`` (from the model) and
    ``EngineError`` on timeout."""
    result = LoopResult(protocol=protocol)
    loop = _Loop(model, sandbox, max_steps, result, counts if counts is not None else Degradations())
    try:
        async with asyncio.timeout(time_limit):
            await loop.run(list(messages))
    except TimeoutError:
        raise EngineError(f"the tool loop did not finish within {time_limit:g} s") from None
    result.written = list(sandbox.written)
    return result


class _Loop:
    """One run of the loop: ask, run the calls, answer them, until the model is done."""

    def __init__(
        self, model: ChatModel, sandbox: Sandbox, max_steps: int, result: LoopResult, counts: Degradations
    ) -> None:
        self.model = model
        self.sandbox = sandbox
        self.max_steps = max_steps
        self.result = result
        self.counts = counts

    async def run(self, history: list[ChatMessage]) -> None:
        if self.result.protocol == "json":
            history = _with_guide(history)
        while True:
            reply = await self._ask(history)
            if reply is None:  # the server refused tools: speak JSON from now on
                history = _with_guide(history)
                continue
            self.result.texts.append(reply.content)
            calls, native, done = self._calls(reply)
            history.append(ChatMessage("assistant", reply.content, tool_calls=tuple(calls) if native else ()))
            for call in calls:
                answer = await self._run(call)
                if native:
                    history.append(ChatMessage("tool", answer, tool_call_id=call.id))
                else:
                    history.append(ChatMessage("user", f"TOOL RESULT ({call.name}): {answer}"))
            if done or not calls:
                return
            if self.result.steps >= self.max_steps:
                log.warning("tool loop stopped after %d steps; keeping what was written", self.result.steps)
                self.result.stopped = True
                return

    async def _ask(self, history: list[ChatMessage]) -> ChatReply | None:
        if self.result.protocol == "json":
            return await self.model.complete(history, json_mode=True, schema=ACTION_SCHEMA)
        try:
            return await self.model.complete(history, tools=TOOL_SPECS)
        except ToolsUnsupportedError:
            if self.result.protocol == "native":
                raise
            log.warning("the chat model refused tools; using the JSON action protocol")
            self.counts.add("tool_protocol_json")
            self.result.protocol = "json"
            return None

    def _calls(self, reply: ChatReply) -> tuple[list[ToolCall], bool, bool]:
        """The reply's calls, whether they are the server's own, and whether the model is done."""
        if reply.tool_calls:
            return list(reply.tool_calls), True, False
        found = json_actions.actions_in(reply.content, set(_TOOLS))
        if found is None:
            return [], False, True
        calls, summary = found
        if calls and self.result.protocol != "json":
            self.counts.add("text_tool_calls")
        return calls, False, summary is not None

    async def _run(self, call: ToolCall) -> str:
        if self.result.steps >= self.max_steps:
            return "error: tool step limit reached; this call was not run"
        self.result.steps += 1
        answer = await asyncio.to_thread(call_tool, self.sandbox, call)
        if answer.startswith("error: "):  # the model is told and may correct it; status counts it
            self.counts.add("tool_call_errors")
        return answer


def _with_guide(history: list[ChatMessage]) -> list[ChatMessage]:
    """The history with the JSON protocol's instructions added to its system message."""
    guide = json_actions.guide(TOOL_SPECS)
    if history and history[0].role == "system":
        return [ChatMessage("system", history[0].content + "\n" + guide), *history[1:]]
    return [ChatMessage("system", guide.lstrip("\n")), *history]
