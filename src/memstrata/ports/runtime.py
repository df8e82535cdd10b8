"""Time, embeddings and chat: the ports to the world outside the memory."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memstrata.models import (
    ChatMessage,
    ChatReply,
    QueryPassReport,
    ResponseSchema,
    ToolSpec,
    Vectors,
)

# --- time -----------------------------------------------------------------------------------------


class Clock(Protocol):
    """Wall time for the scheduler. Injected so every timing rule is testable with a fake clock."""

    def now_ms(self) -> int:
        """Milliseconds since the epoch."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait (a fake clock may return at once or when advanced)."""
        ...


# --- models ---------------------------------------------------------------------------------------


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    ``name`` identifies the model (the store records it, so a change is detected);
    ``dimensions`` is the vector length. ``embed`` returns an array of shape ``(len(texts), dimensions)``,
    each row L2-normalised, in input order. Raises ``EmbeddingError`` on failure. Blocking.
    """

    @property
    def name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


@runtime_checkable
class QueryFirstEmbedder(Embedder, Protocol):
    """An embedder that tells queries from background batches (the shipped local model).

    ``embed_queries`` embeds search queries a caller waits on, at request priority, and the
    embedder's background ``embed`` passes may step aside while it runs. A model trained with
    query and passage prompts (e5) uses its query prompt there; any other returns ``embed``'s
    vectors to float rounding. Either way a batch's rows equal single calls' to 1e-5.
    ``query_report`` says how its background passes stepped aside, and how its query process
    (a server's shipped model) fares. ``warm_up`` readies the model now (a server, before it takes
    requests): waits up to ``within`` seconds for the child processes that run it, if it has
    them, and loads it in this process where no child answers.
    """

    def embed_queries(self, texts: Sequence[str]) -> Vectors: ...

    def warm_up(self, within: float) -> None: ...

    def query_report(self) -> QueryPassReport: ...


@runtime_checkable
class EmbedderChoice(Protocol):
    """An embedder chosen per store (``auto`` with the multilingual extra installed).

    A store that holds vectors keeps the model that made them (``for_model``); a new store's model
    is chosen from its first messages (``for_texts``), then recorded like any other, so one store
    keeps one model until ``reindex``.
    """

    def for_model(self, name: str) -> Embedder:
        """The embedder for a store whose vectors ``name`` made: that model when it is one of the
        choices, else the default (whose name then differs, so the store reports stale vectors)."""
        ...

    def for_texts(self, texts: Sequence[str]) -> Embedder:
        """The embedder for a new store whose first messages are ``texts`` (not empty)."""
        ...


class ChatModel(Protocol):
    """One chat completion. Raises ``ModelError`` on timeout, HTTP error or connection failure,
    ``ContextLengthError`` when the prompt does not fit the model's context and
    ``ToolsUnsupportedError`` when the server refuses ``tools``.

    ``json_mode`` asks for a JSON reply; ``schema`` (implies JSON) the reply's JSON schema, which
    a server that supports structured outputs enforces and any other may ignore: the caller
    still validates. ``max_tokens`` overrides the model's own cap for this call (a truncated reply
    says ``finish_reason="length"``).
    """

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        schema: ResponseSchema | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> ChatReply: ...
