"""Chat models: ``OpenAIChatModel`` (any OpenAI-compatible endpoint) and ``ScriptedChatModel``
(a scripted fake for tests and examples). Both implement ``memstrata.ports.ChatModel``."""

from memstrata.llm.openai_compat import OpenAIChatModel
from memstrata.llm.scripted import ScriptedCall, ScriptedChatModel

__all__ = ["OpenAIChatModel", "ScriptedCall", "ScriptedChatModel"]
