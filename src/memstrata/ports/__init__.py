"""The small interfaces the core depends on. Adapters implement them; fakes ship in the package.

    Clock           now_ms(), sleep()                      clock.py: SystemClock, FakeClock
    Embedder        embed(texts) -> unit vectors            embeddings/: hashing, local model, openai
    QueryFirstEmbedder  + embed_queries(texts)              embeddings/local.py, e5.py
    EmbedderChoice  for_model(name), for_texts(texts)       embeddings/select.py (auto, per store)
    ChatModel       complete(messages) -> reply             llm/: openai_compat, scripted
    Extractor       extract(window) -> atom drafts          engines/: offline, llm
    Deduplicator    decide(drafts, candidates) -> actions   engines/: offline, llm
    Store parts     MessageLog, AtomStore, SearchIndex, PipelineState, SceneMembers, Leases,
                    KeyStore (a server's scoped API keys)
                    (+ Store.tenants, erase, compact: forgetting a tenant for good)
                                                            stores/sqlite, stores/postgres
    SceneStore      L2 scene files, their index and backups  stores/files, stores/postgres
    PersonaStore    L3 persona.md and its backups            stores/files, stores/postgres
    Folder          the documents a scene or persona writer may touch   stores/files
    SceneWriter     consolidate atoms into scene files       engines/: offline, llm
    PersonaWriter   write the persona body from scenes       engines/: offline, llm

By module: ``runtime`` (Clock, Embedder, ChatModel), ``engines`` (the four engine ports and the
L2/L3 requests they take), ``folder`` (Folder), ``stores`` (the store parts and ``Store``),
``documents`` (SceneStore, PersonaStore, UpperLayers).
Scores are always "higher is better". Every store method that reads takes a ``Tenant`` and filters
by it inside its query. Store methods are synchronous and short; the async core calls them from a
worker thread.
"""

from memstrata.ports.documents import PersonaStore, SceneStore, UpperLayers
from memstrata.ports.engines import (
    ConsolidationRequest,
    Deduplicator,
    Extractor,
    PersonaRequest,
    PersonaWriter,
    SceneWriter,
)
from memstrata.ports.folder import Folder
from memstrata.ports.runtime import ChatModel, Clock, Embedder, EmbedderChoice, QueryFirstEmbedder
from memstrata.ports.stores import (
    AtomStore,
    KeyStore,
    Leases,
    MessageLog,
    PipelineState,
    SceneMembers,
    SearchIndex,
    Store,
)

__all__ = [
    "AtomStore",
    "ChatModel",
    "Clock",
    "ConsolidationRequest",
    "Deduplicator",
    "Embedder",
    "EmbedderChoice",
    "Extractor",
    "Folder",
    "KeyStore",
    "Leases",
    "MessageLog",
    "PersonaRequest",
    "PersonaStore",
    "PersonaWriter",
    "PipelineState",
    "QueryFirstEmbedder",
    "SceneMembers",
    "SceneStore",
    "SceneWriter",
    "SearchIndex",
    "Store",
    "UpperLayers",
]
