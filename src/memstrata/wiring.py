"""The composition root: settings in, wired objects out. The only module that picks adapters."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memstrata.clock import SystemClock
from memstrata.embeddings.select import SAMPLE_MESSAGES, embedder_from_settings
from memstrata.engines.offline import (
    OfflineDeduplicator,
    OfflineExtractor,
    OfflinePersonaWriter,
    OfflineSceneWriter,
)
from memstrata.errors import ConfigError, MissingExtraError
from memstrata.interchange.migrate.copy import MigrationReport, Progress, copy_memory
from memstrata.models import Degradations
from memstrata.ports import (
    ChatModel,
    Clock,
    Deduplicator,
    Embedder,
    EmbedderChoice,
    Extractor,
    PersonaWriter,
    SceneWriter,
    Store,
    UpperLayers,
)
from memstrata.retrieval.vector_texts import first_messages
from memstrata.retrieval.vectors import VectorState
from memstrata.settings import Settings
from memstrata.stores.files import FilePersonaStore, FileSceneStore
from memstrata.stores.files.leftovers import remove_stale_temporaries
from memstrata.stores.sqlite.store import SqliteStore

if TYPE_CHECKING:
    from memstrata.stores.postgres.store import PostgresStore

# A server (``embedding.query_process``) opens with its embedder ready: its query child answering
# (or the weights loaded here), waited for up to this long (a child loads numpy
# and the weights: ~1 s idle). Started cold, a server's first seconds of queries ran in its own
# process beside both loads (bench/gateway_load.py --cold, docs/benchmarks.md).
WARM_UP_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class Parts:
    """What a memory is made of: the store, the clock, the vectors' state, the L1 engine and the
    L2/L3 stores and writers. ``read_only``: the store was opened for reading only."""

    store: Store
    clock: Clock
    vectors: VectorState
    extractor: Extractor
    deduplicator: Deduplicator
    upper: UpperLayers | None
    read_only: bool = False
    # What the engines got by without (status shows it); shared by the chat model and the engines.
    degradations: Degradations = field(default_factory=Degradations)


def is_database_url(location: str | Path) -> bool:
    """True for a PostgreSQL URL (``postgresql://...`` or ``postgres://...``)."""
    return str(location).startswith(("postgres://", "postgresql://"))


def data_dir(location: str | Path) -> Path:
    """The data directory a path (or ``sqlite:///path``) names."""
    text = str(location)
    if is_database_url(text):
        raise ConfigError("a PostgreSQL URL names a database, not a data directory")
    if "://" in text and not text.startswith("sqlite:///"):
        raise ConfigError(
            f"unknown store URL {text.split('://')[0]}://...: use a data directory or postgresql://"
        )
    return Path(text.removeprefix("sqlite:///")).expanduser()


def open_store(
    location: str | Path,
    *,
    read_only: bool = False,
    wait: float = 0.0,
    url: str | None = None,
    shared: bool = False,
    joins: int | None = None,
) -> Store:
    """A path (or ``sqlite:///path``) opens the embedded store in that data directory: as its one
    writer (waiting up to ``wait`` seconds for another to finish; ``shared`` with its workers), as
    a worker that ``joins`` the owner with that pid, or ``read_only``. A PostgreSQL URL opens that
    database (no writer lock: ``wait``, ``url``, ``shared`` and ``joins`` do not apply), migrating
    it unless ``read_only``."""
    if is_database_url(location):
        return _postgres(str(location), read_only)
    return SqliteStore(
        data_dir(location), read_only=read_only, wait=wait, url=url, shared=shared, joins=joins
    )


def _postgres(url: str, read_only: bool) -> PostgresStore:
    try:
        from memstrata.stores.postgres.store import PostgresStore
    except ImportError as exc:
        missing = exc.name or "psycopg"
        raise MissingExtraError(missing.split(".")[0], "postgres", "the PostgreSQL store") from exc
    return PostgresStore(url, read_only=read_only)


def chat_model(settings: Settings, degradations: Degradations | None = None) -> ChatModel:
    from memstrata.llm.openai_compat import OpenAIChatModel

    s = settings.llm
    if not (s.base_url and s.model):
        raise ConfigError("the llm engine needs llm.base_url and llm.model (MEMSTRATA_LLM__BASE_URL, ...)")
    return OpenAIChatModel(
        s.base_url,
        s.api_key,
        s.model,
        s.timeout_seconds,
        s.max_tokens,
        s.json_mode,
        structured_output=s.structured_output,
        retries=s.retries,
        backoff_seconds=s.retry_backoff_seconds,
        concurrency=s.concurrency,
        degradations=degradations,
    )


def engines(
    settings: Settings, model: ChatModel | None = None, degradations: Degradations | None = None
) -> tuple[Extractor, Deduplicator]:
    if settings.pipeline.engine == "offline" and model is None:
        return OfflineExtractor(), OfflineDeduplicator()
    from memstrata.engines.llm.l1 import LLMDeduplicator, LLMExtractor

    chat = model or chat_model(settings, degradations)
    # The first reply budget is the model's own (llm.max_tokens for the OpenAI-compatible one);
    # a truncated reply is asked again with more, up to the cap.
    extractor = LLMExtractor(
        chat,
        degradations=degradations,
        max_tokens_cap=max(settings.llm.max_tokens_cap, settings.llm.max_tokens),
    )
    return extractor, LLMDeduplicator(chat, degradations=degradations)


def writers(
    settings: Settings, model: ChatModel | None = None, degradations: Degradations | None = None
) -> tuple[SceneWriter, PersonaWriter]:
    """The L2/L3 engine: offline by default, the llm one with a model (as for L1)."""
    if settings.pipeline.engine == "offline" and model is None:
        return OfflineSceneWriter(), OfflinePersonaWriter(settings.persona.max_chars)
    from memstrata.engines.llm.l2 import LLMSceneWriter
    from memstrata.engines.llm.l3 import LLMPersonaWriter

    chat = model or chat_model(settings, degradations)
    protocol = settings.llm.tool_calling
    return (
        LLMSceneWriter(chat, settings.persona, tool_calling=protocol, degradations=degradations),
        LLMPersonaWriter(chat, settings.persona, tool_calling=protocol, degradations=degradations),
    )


def upper_layers(
    settings: Settings,
    location: str | Path,
    model: ChatModel | None = None,
    store: Store | None = None,
    degradations: Degradations | None = None,
) -> UpperLayers:
    """The L2/L3 stores (files under ``<data dir>/profiles``, or the rows of the PostgreSQL
    ``store`` opened on ``location``) and the L2/L3 writers."""
    p = settings.persona
    scene_writer, persona_writer = writers(settings, model, degradations)
    if is_database_url(location):
        from memstrata.stores.postgres.store import PostgresStore

        if not isinstance(store, PostgresStore):
            raise ConfigError("the PostgreSQL scene and persona stores are opened with its store")
        return UpperLayers(
            store.scene_store(keep=p.scene_backup_count),
            store.persona_store(keep=p.backup_count),
            scene_writer,
            persona_writer,
        )
    root = data_dir(location) / "profiles"
    return UpperLayers(
        FileSceneStore(root, keep=p.scene_backup_count),
        FilePersonaStore(root, keep=p.backup_count),
        scene_writer,
        persona_writer,
    )


def store_location(settings: Settings, location: str | Path | None = None) -> str | Path:
    """Where the store is: ``location`` when given, else ``store.url`` when set, else the data
    directory ``home``."""
    if location:
        return location if is_database_url(location) else data_dir(location)
    if settings.store.url:
        return settings.store.url if is_database_url(settings.store.url) else data_dir(settings.store.url)
    return data_dir(settings.home)


def assemble(
    settings: Settings,
    location: str | Path | None = None,
    *,
    read_only: bool = False,
    wait: float = 0.0,
    advertise_url: str | None = None,
    clock: Clock | None = None,
    embedder: Embedder | EmbedderChoice | str | None = "settings",
    chat: ChatModel | None = None,
    shared: bool = False,
    joins: int | None = None,
) -> Parts:
    """Objects for ``settings``; explicit arguments (a fake clock, an embedder, a chat model) win.
    ``shared`` and ``joins``: a server's and a worker's data directory (``open_store``)."""
    chosen = embedder_from_settings(settings.embedding) if embedder == "settings" else embedder
    if isinstance(chosen, str):
        raise ConfigError(f"embedder must be an Embedder, None or 'settings', not {chosen!r}")
    counts = Degradations()
    if chat is None and settings.pipeline.engine == "llm":
        chat = chat_model(settings, counts)  # one model (and one probe of the server) for all stages
    extractor, deduplicator = engines(settings, chat, counts)
    where = store_location(settings, location)
    store = open_store(where, read_only=read_only, wait=wait, url=advertise_url, shared=shared, joins=joins)
    try:
        # The owner, just opened: nobody is mid-write (a worker leaves this to its owner).
        if not read_only and joins is None and not is_database_url(where):
            remove_stale_temporaries(data_dir(where))
        vectors = VectorState(
            store.index, chosen, writable=not read_only, sample=lambda: first_messages(store, SAMPLE_MESSAGES)
        )
        upper = upper_layers(settings, where, chat, store, counts)
        if settings.embedding.query_process and not read_only:
            vectors.warm_up(WARM_UP_SECONDS)
    except BaseException:
        store.close()
        raise
    return Parts(store, clock or SystemClock(), vectors, extractor, deduplicator, upper, read_only, counts)


def migrate(
    source: str | Path, target: str | Path, settings: Settings, progress: Progress | None = None
) -> MigrationReport:
    """Open the memory at ``source`` read-only and the empty store at ``target``, and copy the one
    into the other (``interchange.migrate``); returns the verification."""
    src = open_store(source, read_only=True)
    try:
        dst = open_store(target)
        try:
            src_upper = upper_layers(settings, source, store=src)
            dst_upper = upper_layers(settings, target, store=dst)
            return copy_memory(src, src_upper, dst, dst_upper, settings, progress)
        finally:
            dst.close()
    finally:
        src.close()
