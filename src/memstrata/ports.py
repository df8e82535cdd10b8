"""The small interfaces the core depends on. Adapters implement them; fakes ship in the package.

    Clock           now_ms(), sleep()                      clock.py: SystemClock, FakeClock
    Embedder        embed(texts) -> unit vectors            embeddings/: hashing, local model, openai
    ChatModel       complete(messages) -> reply             llm/: openai_compat, scripted
    Extractor       extract(window) -> atom drafts          engines/: offline, llm
    Deduplicator    decide(drafts, candidates) -> actions   engines/: offline, llm
    Store parts     MessageLog, AtomStore, SearchIndex, PipelineState   stores/sqlite
    SceneStore      L2 scene files, their index and backups  stores/files
    PersonaStore    L3 persona.md and its backups            stores/files
    SceneWriter     consolidate atoms into scene files       engines/: offline, llm
    PersonaWriter   write the persona body from scenes       engines/: offline, llm

Scores are always "higher is better". Every store method that reads takes a ``Tenant`` and filters
by it inside its query. Store methods are synchronous and short; the async core calls them from a
worker thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
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

    def get(self, tenant: Tenant, ids: Sequence[str]) -> list[Message]:
        """The tenant's messages with these ids, by ascending seq (unknown ids left out)."""
        ...

    def delete(
        self, tenant: Tenant, ids: Sequence[str] = (), session_keys: Sequence[str] = ()
    ) -> list[Message]:
        """Remove, in one transaction, the tenant's messages with these ids or in these sessions,
        with their keyword index rows. Returns the removed messages (vectors: ``SearchIndex``)."""
        ...

    def tally(self, tenant: Tenant, flt: MessageFilter) -> int:
        """How many of the tenant's messages match ``flt``."""
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

    def delete(self, tenant: Tenant, ids: Sequence[str]) -> list[Atom]:
        """Remove, in one transaction, the tenant's atoms with these ids and every older version
        they superseded (transitively), with their keyword index rows. Returns the removed atoms."""
        ...

    def tally(self, tenant: Tenant, flt: AtomFilter) -> int:
        """How many of the tenant's atoms match ``flt`` (current only, unless it includes history)."""
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

    def drop_vectors(self, tenant: Tenant, layer: Layer, seqs: Sequence[int]) -> None:
        """Forget the vectors of these records of ``tenant`` (the records were deleted)."""
        ...

    def get_vectors(self, tenant: Tenant, layer: Layer, seqs: Sequence[int]) -> dict[int, Vectors]:
        """The stored vectors (1-D, unit length) of these records of ``tenant``, by seq; records
        without a vector are left out."""
        ...

    def missing_vectors(self, layer: Layer, after_seq: int, limit: int) -> list[tuple[Tenant, int]]:
        """Records of ``layer`` (any tenant) without a vector: ``(tenant, seq)``, ascending seq."""
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

    def tenant(self, tenant: Tenant) -> TenantState:
        """The tenant's L2/L3 state (a fresh one if never saved)."""
        ...

    def save_tenant(self, state: TenantState) -> None:
        """Persist every field of the tenant's L2/L3 state."""
        ...

    def tenants(self) -> list[TenantState]:
        """Every tenant's saved L2/L3 state."""
        ...


@dataclass(slots=True)
class TenantState:
    """Durable L2/L3 scheduling state of one tenant (DESIGN section 4).

    L3 requests are counted, not flagged: a trigger bumps ``l3_requested``; a run remembers the
    value it started from and, on success only, sets ``l3_done`` to it. Triggers that arrive during
    a run therefore leave ``l3_requested > l3_done``: exactly one follow-up run, however many came.
    """

    tenant: Tenant
    l2_cursor: int = 0  # last atom seq consolidated into scenes
    l2_fire_at: int | None = None  # the L2 timer, ms (None: not polling)
    last_l2: int | None = None  # when the last L2 run succeeded, ms
    last_active: int = 0  # when an L1 run last wrote atoms, ms
    l2_attempts: int = 0
    l2_error: str | None = None
    l2_snapshot: str | None = None  # scene backup of the run in progress (set: restore after a crash)
    new_atoms: int = 0  # atoms consolidated since the last persona
    l3_requested: int = 0
    l3_done: int = 0
    l3_reasons: tuple[str, ...] = ()  # why L3 was requested since the last persona
    l3_fire_at: int | None = None  # retry backoff after a failure, ms
    l3_attempts: int = 0
    l3_error: str | None = None
    last_l3: int | None = None  # when the last persona was written, ms
    l3_running: bool = False  # a run is in progress (after a crash: restore ``l3_snapshot``)
    l3_snapshot: str | None = None  # persona backup of that run (None: there was no persona)


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


# --- L2 scenes and the L3 persona -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scene:
    """An L2 scene document: the file ``scene_blocks/<name>``, a META header and a Markdown body.

    Times are ms since the epoch (the file keeps minutes). ``heat`` grows with consolidation and
    recall hits.
    """

    name: str  # file name inside scene_blocks/, e.g. ``family.md``
    summary: str
    heat: int
    created: int
    updated: int
    body: str


@dataclass(frozen=True, slots=True)
class SceneEntry:
    """One line of ``.metadata/scene_index.json``: a scene's META and the atom ids it consolidates."""

    name: str
    summary: str
    heat: int
    created: int
    updated: int
    atom_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Persona:
    """The L3 persona of a tenant: ``persona.md`` split into the body and the scene navigation."""

    tenant: Tenant
    body: str
    navigation: str
    updated: int  # ms


class SceneStore(Protocol):
    """L2 storage of a tenant: scene files, their index and backups of the scene folder.

    Scene files are the source of truth; the index is rebuilt from them by the pipeline.
    Every write replaces a file atomically.
    """

    def folder(self, tenant: Tenant) -> Path:
        """The tenant's ``scene_blocks/`` folder (created when missing): the only folder a scene
        writer may touch."""
        ...

    def load(self, tenant: Tenant) -> list[Scene]:
        """Every scene file of the tenant, parsed, by name. Symlinks and other files are ignored."""
        ...

    def save(self, tenant: Tenant, scene: Scene) -> None:
        """Write ``scene`` to ``scene_blocks/<scene.name>`` in the META format."""
        ...

    def remove(self, tenant: Tenant, name: str) -> bool:
        """Delete ``scene_blocks/<name>`` (a normalised name); False when there was no such file.
        The index is left to the caller."""
        ...

    def tidy(self, tenant: Tenant) -> dict[str, str | None]:
        """Remove soft-deleted files (``[DELETED]``, empty, or META without body) and give the
        others normalised names. Returns ``{old name: new name, or None when removed}`` for the
        files it changed."""
        ...

    def index(self, tenant: Tenant) -> list[SceneEntry]:
        """The saved scene index (empty when none)."""
        ...

    def save_index(self, tenant: Tenant, entries: Sequence[SceneEntry]) -> None:
        """Replace ``.metadata/scene_index.json``."""
        ...

    def backup(self, tenant: Tenant) -> str:
        """Snapshot the scene folder and the index; prune old snapshots. Returns the snapshot id."""
        ...

    def restore(self, tenant: Tenant, snapshot: str) -> None:
        """Make the scene folder and the index byte-identical to ``snapshot``.
        Raises ``StoreError`` when the snapshot is gone."""
        ...

    def tenants(self) -> list[Tenant]:
        """Tenants that have a profile folder."""
        ...


class PersonaStore(Protocol):
    """L3 storage of a tenant: ``persona.md`` and its backups."""

    def path(self, tenant: Tenant) -> Path:
        """The tenant's ``persona.md`` (its folder created): the only file a persona writer may touch."""
        ...

    def read(self, tenant: Tenant) -> tuple[str, int] | None:
        """The persona file's text and modification time (ms), or None when there is none."""
        ...

    def write(self, tenant: Tenant, text: str) -> None:
        """Replace ``persona.md`` atomically."""
        ...

    def backup(self, tenant: Tenant) -> str | None:
        """Snapshot ``persona.md`` and prune old snapshots; None when there is no persona yet."""
        ...

    def restore(self, tenant: Tenant, snapshot: str | None) -> None:
        """Put ``persona.md`` back as in ``snapshot`` (None: remove it, there was none)."""
        ...


@dataclass(frozen=True, slots=True)
class ConsolidationRequest:
    """What a scene writer consolidates in one call: one batch of a tenant's L2 run.

    ``atoms`` are new atoms (plus any the writer deferred earlier in the run), by seq;
    ``members`` maps each scene file to its current atoms; ``vectors`` maps atom ids to unit
    vectors when the store has them (empty without an embedder); ``total_atoms`` is how many
    current atoms the tenant has (this batch, the scenes and the rest of the run's backlog).
    """

    tenant: Tenant
    folder: Path
    atoms: tuple[Atom, ...]
    scenes: tuple[Scene, ...]
    members: Mapping[str, tuple[Atom, ...]]
    vectors: Mapping[str, Vectors]
    max_scenes: int
    final: bool  # the last batch of the run: every atom must be placed
    now: int
    total_atoms: int = 0


@dataclass(frozen=True, slots=True)
class ConsolidationResult:
    """What a scene writer did. ``placed`` maps atom ids to the scene file that now holds them
    (also atoms moved by a merge); atoms it leaves out are attributed by the pipeline to the most
    similar scene. ``deferred`` atoms are offered again with the next batch (ignored when final)."""

    placed: Mapping[str, str] = field(default_factory=dict)
    deferred: tuple[str, ...] = ()
    persona_requests: tuple[str, ...] = ()  # reasons from ``[PERSONA_UPDATE_REQUEST]``


class SceneWriter(Protocol):
    """Consolidates atoms into the scene files of ``request.folder`` (and nowhere else).

    Rules: update an existing scene by default; create at most one new scene per call; when at
    ``max_scenes``, merge 2-4 similar scenes before creating one; delete a file by writing
    ``[DELETED]``. Raises ``EngineError`` when it cannot finish (the pipeline restores the backup).
    """

    async def consolidate(self, request: ConsolidationRequest) -> ConsolidationResult: ...


@dataclass(frozen=True, slots=True)
class PersonaRequest:
    """What a persona writer sees. ``path`` holds the current body (navigation stripped) during the
    run; ``first`` is True when there is no persona yet; ``changed`` names scenes changed since the
    last persona; ``atoms`` are the highest-priority persona and instruction atoms, ``events`` the
    highest-priority episodic ones."""

    tenant: Tenant
    path: Path
    current: str
    first: bool
    scenes: tuple[Scene, ...]
    changed: tuple[str, ...]
    atoms: tuple[Atom, ...]
    reasons: tuple[str, ...]
    now: int
    events: tuple[Atom, ...] = ()


class PersonaWriter(Protocol):
    """Writes the persona body (Markdown, no navigation). Touches ``request.path`` at most.
    Raises ``EngineError`` when it cannot finish (the pipeline restores the backup)."""

    async def write(self, request: PersonaRequest) -> str: ...


@dataclass(frozen=True, slots=True)
class UpperLayers:
    """The L2/L3 parts a memory needs: where scenes and the persona live, and who writes them."""

    scenes: SceneStore
    persona: PersonaStore
    scene_writer: SceneWriter
    persona_writer: PersonaWriter
