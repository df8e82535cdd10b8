"""memstrata: layered long-term memory for LLM agents.

from memstrata import Memory

with Memory.open("~/.memstrata") as mem:
    mem.capture([{"role": "user", "content": "I moved to Lisbon last week."}], session_key="chat-1")
    mem.end_session("chat-1")
    for hit in mem.search("where does the user live?", layers=("L1", "L0")):
        print(hit.layer, hit.content)
"""

from memstrata.clock import FakeClock, SystemClock
from memstrata.errors import (
    CircuitOpenError,
    ConfigError,
    ConflictError,
    DirectoryLockedError,
    EmbeddingError,
    EngineError,
    InputError,
    MemstrataError,
    MissingExtraError,
    ModelError,
    NotDoneError,
    NotFoundError,
    ParseError,
    PathError,
    ReadOnlyError,
    RemoteError,
    SchemaError,
    StorageError,
    StoreError,
    TurnLimitError,
)
from memstrata.layers.l0.recorder import CaptureResult
from memstrata.memory import AsyncMemory
from memstrata.models import (
    Atom,
    AtomType,
    Hit,
    Layer,
    Message,
    NewMessage,
    Role,
    SearchResult,
    Status,
    Tenant,
)
from memstrata.operations import BlockingMemoryApi, MemoryApi
from memstrata.recall import RecallResult
from memstrata.settings import Settings, load_settings
from memstrata.sync import Memory
from memstrata.tools import MemoryTools

__all__ = [
    "AsyncMemory",
    "Atom",
    "AtomType",
    "BlockingMemoryApi",
    "CaptureResult",
    "CircuitOpenError",
    "ConfigError",
    "ConflictError",
    "DirectoryLockedError",
    "EmbeddingError",
    "EngineError",
    "FakeClock",
    "Hit",
    "InputError",
    "Layer",
    "Memory",
    "MemoryApi",
    "MemoryTools",
    "MemstrataError",
    "Message",
    "MissingExtraError",
    "ModelError",
    "NewMessage",
    "NotDoneError",
    "NotFoundError",
    "ParseError",
    "PathError",
    "ReadOnlyError",
    "RecallResult",
    "RemoteError",
    "Role",
    "SchemaError",
    "SearchResult",
    "Settings",
    "Status",
    "StorageError",
    "StoreError",
    "SystemClock",
    "Tenant",
    "TurnLimitError",
    "load_settings",
]
