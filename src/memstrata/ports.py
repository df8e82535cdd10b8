"""The small interfaces the core depends on. Adapters implement them; fakes ship in the package.

    Clock           now_ms(), sleep()                      clock.py: SystemClock, FakeClock
    Embedder        embed(texts) -> unit vectors            embeddings/: hashing, local model, openai
    ChatModel       complete(messages) -> reply             llm/: openai_compat, scripted
    Extractor       extract(window) -> atom drafts          engines/: offline, llm
    Deduplicator    decide(drafts, candidates) -> actions   engines/: offline, llm
    Store parts     MessageLog, AtomStore, SearchIndex, PipelineState   stores/sqlite

Scores are always "higher is better". Every store method that reads takes a ``Tenant`` and filters
by it inside its query. Store methods are synchronous and short; the async core calls them from a
worker thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from memstrata.models import Atom, AtomType, Layer, Message, Tenant

Vectors = npt.NDArray[np.float32]


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


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_call_id: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: Mapping[str, Any]  # JSON schema


@dataclass(frozen=True, slots=True)
class ChatReply:
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ChatModel(Protocol):
    """One chat completion. Raises ``ModelError`` on timeout, HTTP error or connection failure."""

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        tools: Sequence[ToolSpec] = (),
    ) -> ChatReply: ...


# --- engines (L1) ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExtractionWindow:
    """What an extractor sees: up to N new messages, plus a few earlier ones as background only."""

    tenant: Tenant
    session_key: str
    new: tuple[Message, ...]
    background: tuple[Message, ...] = ()


@dataclass(frozen=True, slots=True)
class AtomDraft:
    """An atom proposed by an extractor. ``source_message_ids`` must name messages of the window."""

    type: AtomType
    content: str
    priority: int = 50
    scene_name: str = ""
    source_message_ids: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


class DedupAction(StrEnum):
    STORE = "store"  # new information: keep as a new atom
    UPDATE = "update"  # corrects one existing atom: the target is superseded by the draft
    MERGE = "merge"  # combines with existing atoms: targets superseded by ``merged_content``
    SKIP = "skip"  # already known: drop the draft


@dataclass(frozen=True, slots=True)
class DedupDecision:
    """What to do with ``drafts[index]``. ``targets`` are ids from that draft's candidates only."""

    index: int
    action: DedupAction
    targets: tuple[str, ...] = ()
    merged_content: str | None = None


class Extractor(Protocol):
    """Turns a window of messages into atom drafts. Raises ``EngineError`` when it cannot."""

    async def extract(self, window: ExtractionWindow) -> list[AtomDraft]: ...


class Deduplicator(Protocol):
    """Decides, per draft, against that draft's candidate atoms (same tenant, current only).

    Returns one decision per draft index it has an opinion on; a missing index means STORE.
    """

    async def decide(
        self, drafts: Sequence[AtomDraft], candidates: Sequence[Sequence[Atom]]
    ) -> list[DedupDecision]: ...


# --- stores ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MessageFilter:
    session_key: str | None = None
    since: int | None = None  # timestamp, ms, inclusive
    until: int | None = None  # timestamp, ms, exclusive


@dataclass(frozen=True, slots=True)
class AtomFilter:
    type: AtomType | None = None
    scene: str | None = None  # substring of scene_name
    since: int | None = None
    until: int | None = None
    include_superseded: bool = False


@dataclass(frozen=True, slots=True)
class Scored:
    """A search primitive's answer: a record's ``seq`` and its score (higher is better)."""

    seq: int
    score: float


class MessageLog(Protocol):
    """L0: the append-only message log."""

    def append(self, items: Sequence[tuple[Message, str]]) -> list[Message]:
        """Store messages (each with the text to index for it) in one transaction.

        Messages whose ``id`` the tenant already has are skipped. Returns the stored ones with
        their ``seq`` assigned, in input order.
        """
        ...

    def last(self, tenant: Tenant, session_key: str) -> Message | None:
        """The session's message with the highest seq, or None."""
        ...

    def after(self, tenant: Tenant, session_key: str, after_seq: int, limit: int) -> list[Message]:
        """The session's messages with ``seq > after_seq``, ascending, at most ``limit``."""
        ...

    def before(self, tenant: Tenant, session_key: str, before_seq: int, limit: int) -> list[Message]:
        """The session's last ``limit`` messages with ``seq < before_seq``, ascending."""
        ...

    def by_seq(self, tenant: Tenant, seqs: Sequence[int]) -> list[Message]:
        """The tenant's messages with these seqs, in the given order (missing ones left out)."""
        ...

    def list(
        self, tenant: Tenant | None, flt: MessageFilter, *, limit: int, after_seq: int = 0
    ) -> list[Message]:
        """Messages by ascending seq; ``tenant=None`` lists every tenant (admin and mirrors only)."""
        ...

    def count(self, tenant: Tenant | None) -> int:
        """How many messages the tenant (or, with None, the store) holds."""
        ...


class AtomStore(Protocol):
    """L1: memory atoms, versioned: a superseded atom stays readable."""

    def commit(
        self,
        tenant: Tenant,
        new: Sequence[tuple[Atom, str]],
        superseded: Mapping[str, str],
        cursor: tuple[str, int] | None,
    ) -> list[Atom]:
        """In ONE transaction: insert ``new`` atoms (with their index text), set
        ``superseded_by`` for each ``old id -> new id`` in ``superseded``, and move the L1 cursor of
        session ``cursor[0]`` to ``cursor[1]``. Atoms whose id exists are skipped (idempotent).
        Returns the inserted atoms with ``seq``."""
        ...

    def by_seq(self, tenant: Tenant, seqs: Sequence[int]) -> list[Atom]:
        """The tenant's atoms with these seqs, in the given order."""
        ...

    def get(self, tenant: Tenant, ids: Sequence[str]) -> list[Atom]:
        """The tenant's atoms with these ids (current or not)."""
        ...

    def list(self, tenant: Tenant | None, flt: AtomFilter, *, limit: int, after_seq: int = 0) -> list[Atom]:
        """Atoms by ascending seq."""
        ...

    def count(self, tenant: Tenant | None) -> int:
        """How many current (not superseded) atoms the tenant (or, with None, the store) holds."""
        ...


class SearchIndex(Protocol):
    """Search primitives per layer. Fusion happens in the core, never here."""

    def keyword(
        self, tenant: Tenant, layer: Layer, terms: Sequence[str], k: int, flt: MessageFilter | AtomFilter
    ) -> list[Scored]:
        """BM25 top-``k`` for records matching ANY of ``terms`` (each matched as a literal phrase)."""
        ...

    def vector(
        self, tenant: Tenant, layer: Layer, query: Vectors, k: int, flt: MessageFilter | AtomFilter
    ) -> list[Scored]:
        """Exact cosine top-``k`` among the tenant's records that have vectors."""
        ...

    def put_vectors(self, tenant: Tenant, layer: Layer, seqs: Sequence[int], vectors: Vectors) -> None:
        """Store (replace) the vectors of these records of ``tenant``."""
        ...

    def missing_vectors(self, layer: Layer, after_seq: int, limit: int) -> list[tuple[Tenant, int, str]]:
        """Records of ``layer`` (any tenant) without a vector: ``(tenant, seq, index text)`` by seq."""
        ...

    def embedding_model(self) -> str | None:
        """The embedder name the stored vectors were made with, or None."""
        ...

    def reset_vectors(self, model: str) -> None:
        """Drop every vector and record ``model`` as the embedder of the vectors to come."""
        ...


@dataclass(slots=True)
class SessionState:
    """Durable L1 scheduling state of one session."""

    tenant: Tenant
    session_key: str
    cursor: int = 0  # last L0 seq extracted
    pending: int = 0  # turns captured since the last L1 run
    runs: int = 0  # completed L1 runs (drives warm-up)
    fire_at: int | None = None  # idle timer or retry time, ms
    attempts: int = 0  # consecutive failures
    last_error: str | None = None
    last_activity: int = 0


class PipelineState(Protocol):
    """Durable scheduler state. Survives restarts; the scheduler keeps nothing it cannot rebuild."""

    def session(self, tenant: Tenant, session_key: str) -> SessionState:
        """The session's state (a fresh one if never saved)."""
        ...

    def save_session(self, state: SessionState) -> None:
        """Persist everything but the cursor (the cursor moves only with ``AtomStore.commit``)."""
        ...

    def sessions(self) -> list[SessionState]:
        """Every known session's state."""
        ...

    def backlog(self) -> list[tuple[Tenant, str, int]]:
        """Sessions with L0 messages after their cursor: ``(tenant, session_key, unprocessed count)``."""
        ...


class Store(Protocol):
    """A backend: one object exposing the per-layer parts."""

    @property
    def messages(self) -> MessageLog: ...

    @property
    def atoms(self) -> AtomStore: ...

    @property
    def index(self) -> SearchIndex: ...

    @property
    def pipeline(self) -> PipelineState: ...

    def close(self) -> None: ...
