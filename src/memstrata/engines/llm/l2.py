"""``LLMSceneWriter``: the ``SceneWriter`` of the LLM engine, a sandboxed tool loop per batch.

The sandbox is the tenant's scene folder; it refuses a second new file in one batch, and a
new file while ``max_scenes`` live scenes exist (merge first). The writer does not say which scene
took which atom: the pipeline attributes atoms to the most similar scene.
"""

from __future__ import annotations

from memstrata.engines.llm.l2_prompt import consolidation_messages
from memstrata.engines.llm.sandbox import Sandbox
from memstrata.engines.llm.tool_loop import Protocol, persona_requests, run_tools
from memstrata.layers.l2.names import FOLDER
from memstrata.models import ConsolidationResult, Degradations
from memstrata.ports import ChatModel, ConsolidationRequest
from memstrata.settings import PersonaSettings


class LLMSceneWriter:
    """Consolidates each batch with ``model`` through file tools on the scene folder.

    Raises ``ModelError`` when the model fails and ``EngineError`` when the loop times out.
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

    async def consolidate(self, request: ConsolidationRequest) -> ConsolidationResult:
        """One tool loop for the batch (none for an empty batch with no scene to rewrite)."""
        if not request.atoms and not request.rewrite:
            return ConsolidationResult()
        created: list[str] = []
        sandbox: Sandbox

        def allow_new(name: str) -> str | None:
            if created:
                return f"one new scene per batch ({created[0]} is it): add to an existing scene"
            if sandbox.live_count() >= request.max_scenes:
                return (
                    f"{request.max_scenes} scenes already: merge 2-4 similar scenes first "
                    "(write [DELETED] to the merged-away files)"
                )
            created.append(name)
            return None

        sandbox = Sandbox(
            request.folder,
            max_write_bytes=self.settings.tool_max_write_bytes,
            prefix=f"{FOLDER}/",
            allow_new=allow_new,
        )
        result = await run_tools(
            self.model,
            consolidation_messages(request),
            sandbox,
            max_steps=self.settings.tool_max_steps,
            time_limit=self.settings.tool_timeout_seconds,
            protocol=self.tool_calling,
            counts=self.degradations,
        )
        self.tool_calling = result.protocol
        return ConsolidationResult(persona_requests=persona_requests(result.texts))
