"""The composition root: settings in, wired objects out. The only module that picks adapters."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memstrata.clock import SystemClock
from memstrata.embeddings.select import embedder_from_settings
from memstrata.engines.offline import OfflineDeduplicator, OfflineExtractor
from memstrata.errors import ConfigError
from memstrata.ports import ChatModel, Clock, Deduplicator, Embedder, Extractor, Store
from memstrata.settings import Settings
from memstrata.stores.sqlite.store import SqliteStore


@dataclass(frozen=True, slots=True)
class Components:
    store: Store
    clock: Clock
    embedder: Embedder | None
    extractor: Extractor
    deduplicator: Deduplicator


def open_store(location: str | Path) -> Store:
    """A path (or ``sqlite:///path``) opens the embedded store in that data directory."""
    text = str(location)
    if text.startswith(("postgres://", "postgresql://")):
        raise ConfigError("the PostgreSQL backend is not available in this version; use a data directory")
    if text.startswith("sqlite:///"):
        text = text.removeprefix("sqlite:///")
    return SqliteStore(Path(text).expanduser())


def chat_model(settings: Settings) -> ChatModel:
    from memstrata.llm.openai_compat import OpenAIChatModel

    s = settings.llm
    if not (s.base_url and s.model):
        raise ConfigError("the llm engine needs llm.base_url and llm.model (MEMSTRATA_LLM__BASE_URL, ...)")
    return OpenAIChatModel(s.base_url, s.api_key, s.model, s.timeout_seconds, s.max_tokens, s.json_mode)


def engines(settings: Settings, model: ChatModel | None = None) -> tuple[Extractor, Deduplicator]:
    if settings.pipeline.engine == "offline" and model is None:
        return OfflineExtractor(), OfflineDeduplicator()
    from memstrata.engines.llm.l1 import LLMDeduplicator, LLMExtractor

    chat = model or chat_model(settings)
    return LLMExtractor(chat), LLMDeduplicator(chat)


def build(
    settings: Settings,
    location: str | Path | None = None,
    *,
    clock: Clock | None = None,
    embedder: Embedder | str | None = "settings",
    chat: ChatModel | None = None,
) -> Components:
    """Objects for ``settings``; explicit arguments (a fake clock, an embedder, a chat model) win."""
    chosen = embedder_from_settings(settings.embedding) if embedder == "settings" else embedder
    if isinstance(chosen, str):
        raise ConfigError(f"embedder must be an Embedder, None or 'settings', not {chosen!r}")
    extractor, deduplicator = engines(settings, chat)
    return Components(
        open_store(location or settings.home), clock or SystemClock(), chosen, extractor, deduplicator
    )
