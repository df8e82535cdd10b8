"""``LLMPersonaWriter``: the ``PersonaWriter`` of the LLM engine, a tool loop on ``persona.md`` alone."""

from __future__ import annotations

from memstrata.engines.llm.l3_prompt import persona_messages
from memstrata.engines.llm.sandbox import Sandbox
from memstrata.engines.llm.tool_loop import Protocol, run_tools
from memstrata.layers.l3 import persona_doc
from memstrata.layers.l3.persona_doc import strip_navigation
from memstrata.models import Degradations
from memstrata.ports import ChatModel, PersonaRequest
from memstrata.settings import PersonaSettings


class LLMPersonaWriter:
    """Writes the persona with ``model`` through file tools sandboxed to ``request.folder``
    (``persona.md`` alone).

    Returns the file's body after the loop. Raises ``ModelError`` when the model fails and
    ``EngineError`` when the loop times out.
    """

    def __init__(
        self,
        model: ChatModel,
        settings: PersonaSettings,
        *,
        tool_calling: Protocol = "auto",
        degradations: Degradations | None = None,
    ) -> None:
        self.model = model
        self.settings = settings
        # "auto" becomes "json" once a loop found the server without tool calling: not probed again.
        self.tool_calling: Protocol = tool_calling
        self.degradations = degradations if degradations is not None else Degradations()

    async def write(self, request: PersonaRequest) -> str:
        sandbox = Sandbox(request.folder, max_write_bytes=self.settings.tool_max_write_bytes)
        result = await run_tools(
            self.model,
            persona_messages(request, self.settings.max_chars),
            sandbox,
            max_steps=self.settings.tool_max_steps,
            time_limit=self.settings.tool_timeout_seconds,
            protocol=self.tool_calling,
            counts=self.degradations,
        )
        self.tool_calling = result.protocol
        return strip_navigation(sandbox.read(persona_doc.FILE))
