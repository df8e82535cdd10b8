"""A ``ChatModel`` that answers from a script: for tests and examples, no network.

Use it wherever a ``ChatModel`` is expected::

    model = ScriptedChatModel()
    model.enqueue('[{"scene_name": "hobbies", "memories": []}]', ModelError("down"))
    await model.complete([ChatMessage("user", "hi")])   # -> ChatReply(content='[...]')
    await model.complete([ChatMessage("user", "hi")])   # raises ModelError("down")
    model.calls[0].messages                              # what was sent
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memstrata.errors import ModelError
from memstrata.models import ChatMessage, ChatReply, ResponseSchema, ToolSpec

Reply = str | ChatReply
Responder = Callable[[Sequence[ChatMessage]], Reply]


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """One ``complete`` call as the model received it."""

    messages: tuple[ChatMessage, ...]
    json_mode: bool
    tools: tuple[ToolSpec, ...]
    schema: ResponseSchema | None = None
    max_tokens: int | None = None


class ScriptedChatModel:
    """Replies from a queue, in order; falls back to ``responder`` when the queue is empty.

    A queued exception is raised when its turn comes. Every call is recorded in ``calls`` (also the
    ones that raise). With an empty queue and no responder, ``complete`` raises
    ``ModelError("scripted model has no reply left")``.
    """

    def __init__(self, *replies: Reply | BaseException, responder: Responder | None = None) -> None:
        self.calls: list[ScriptedCall] = []
        self.responder = responder
        self._queue: deque[Reply | BaseException] = deque(replies)

    def enqueue(self, *replies: Reply | BaseException) -> None:
        """Append replies (texts, ``ChatReply``s or exceptions to raise) to the queue."""
        self._queue.extend(replies)

    @property
    def remaining(self) -> int:
        """How many queued replies have not been used yet."""
        return len(self._queue)

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        schema: ResponseSchema | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> ChatReply:
        """Record the call, then answer with the next queued reply (or the responder's)."""
        self.calls.append(ScriptedCall(tuple(messages), json_mode, tuple(tools), schema, max_tokens))
        if self._queue:
            reply = self._queue.popleft()
        elif self.responder is not None:
            reply = self.responder(messages)
        else:
            raise ModelError("scripted model has no reply left")
        if isinstance(reply, BaseException):
            raise reply
        return reply if isinstance(reply, ChatReply) else ChatReply(content=reply)
