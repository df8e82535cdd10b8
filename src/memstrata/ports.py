"""The small interfaces the core depends on. Adapters implement them; fakes ship in the package.

    Clock           now_ms(), sleep()                      clock.py: SystemClock, FakeClock
    Embedder        embed(texts) -> unit vectors            embeddings/: hashing, local model, openai
    ChatModel       complete(messages) -> reply             llm/: openai_compat, scripted
    Extractor       extract(window) -> atom drafts          engines/: offline, llm
    Deduplicator    decide(drafts, candidates) -> actions   engines/: offline, llm
    Store parts     MessageLog, AtomStore, SearchIndex, PipelineState, SceneMembers, Leases
                    (+ Store.tenants, erase, compact: forgetting a tenant for good)
                                                            stores/sqlite, stores/postgres
    SceneStore      L2 scene files, their index and backups  stores/files
    PersonaStore    L3 persona.md and its backups            stores/files
    Folder          the documents a scene or persona writer may touch   stores/files
    SceneWriter     consolidate atoms into scene files       engines/: offline, llm
    PersonaWriter   write the persona body from scenes       engines/: offline, llm

Scores are always "higher is better". Every store method that reads takes a ``Tenant`` and filters
by it inside its query. Store methods are synchronous and short; the async core calls them from a
worker thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from memstrata.models import (
    Atom,
    AtomDraft,
    AtomFilter,
    ChatMessage,
    ChatReply,
    ConsolidationRequest,
    ConsolidationResult,
    DedupDecision,
    Erased,
    ExtractionWindow,
    FileProblem,
    Layer,
    Message,
    MessageFilter,
    PersonaRequest,
    Scene,
    SceneEntry,
    Scored,
    SessionState,
    SweepState,
    Tenant,
    TenantState,
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
        with their keyword index rows (and from any mirror of the log). Returns the removed
        messages (their vectors: ``SearchIndex.drop_vectors``)."""
        ...

    def tally(self, tenant: Tenant, flt: MessageFilter) -> int:
        """How many of the tenant's messages match ``flt``."""
        ...

    def sessions(self, tenant: Tenant | None) -> list[tuple[Tenant, str]]:
        """Every ``(tenant, session key)`` holding messages (of ``tenant``; with None, of the
        store), by the seq of its first message."""
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
    """L1: memory atoms, versioned: a superseded atom stays readable.

    Every read taking an ``AtomFilter`` with ``at`` set leaves out the atoms expired at that time
    (``expires_at <= at`` and not pinned), inside the query; so do ``SearchIndex.keyword`` and
    ``SearchIndex.vector``."""

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

    def amend(self, tenant: Tenant, atoms: Sequence[Atom]) -> list[Atom]:
        """Write the ``metadata``, ``pinned`` and ``expires_at`` of these atoms of ``tenant`` in
        place, in one transaction: no new version; id, seq and every other field stay. Returns the
        atoms as now stored (ids the tenant does not have are left out)."""
        ...

    def citing(self, tenant: Tenant, message_ids: Sequence[str]) -> list[Atom]:
        """The tenant's atoms, current or not, whose ``source_message_ids`` name any of
        ``message_ids``, by ascending seq."""
        ...

    def sweepable(self, now: int, older_than: int | None, limit: int, after_seq: int = 0) -> list[Atom]:
        """Atoms of every tenant, current or not, that are not pinned and either expired
        (``expires_at <= now``) or, when ``older_than`` is given, last updated before it (ms);
        ascending seq after ``after_seq``, at most ``limit``."""
        ...

    def list(self, tenant: Tenant | None, flt: AtomFilter, *, limit: int, after_seq: int = 0) -> list[Atom]:
        """Atoms by ascending seq."""
        ...

    def count(self, tenant: Tenant | None) -> int:
        """How many current (not superseded) atoms the tenant (or, with None, the store) holds."""
        ...


class SearchIndex(Protocol):
    """Search primitives per layer. Fusion happens in the core, never here. An ``AtomFilter``
    with ``at`` leaves expired atoms out inside the query (see ``AtomStore``)."""

    def keyword(
        self,
        tenant: Tenant,
        flt: MessageFilter | AtomFilter,
        terms: Sequence[str],
        k: int,
        *,
        min_match: int = 1,
    ) -> list[Scored]:
        """BM25 top-``k`` of the tenant's records holding at least ``min_match`` (1 or 2) of ``terms``,
        each term matched as a literal phrase (any user text is a valid term). The filter's type
        names the layer: ``MessageFilter`` searches L0, ``AtomFilter`` L1."""
        ...

    def size(self, layer: Layer) -> int:
        """About how many records the layer's keyword index holds (all tenants); cheap."""
        ...

    def document_counts(self, layer: Layer, terms: Sequence[str]) -> dict[str, int]:
        """How many records of the layer (all tenants) hold each term, by term as given."""
        ...

    def vector(self, tenant: Tenant, flt: MessageFilter | AtomFilter, query: Vectors, k: int) -> list[Scored]:
        """Cosine top-``k`` among the tenant's records of the filter's layer that have vectors."""
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

    def count_missing_vectors(self, layer: Layer) -> int:
        """How many records of ``layer`` (all tenants) have no vector."""
        ...

    def embedding_model(self) -> str | None:
        """The embedder name the stored vectors were made with, or None."""
        ...

    def reset_vectors(self, model: str) -> None:
        """Drop every vector and record ``model`` as the embedder of the vectors to come."""
        ...


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

    def update_session(
        self, tenant: Tenant, session_key: str, change: Callable[[SessionState], object]
    ) -> SessionState:
        """Load the session's state, apply ``change`` (it mutates the state in place) and save it
        (all but the cursor) as one atomic step: no other update of that session, from any
        process, interleaves. Returns the saved state."""
        ...

    def update_tenant(self, tenant: Tenant, change: Callable[[TenantState], object]) -> TenantState:
        """``update_session`` for the tenant's L2/L3 state (every field is saved)."""
        ...

    def sweep(self) -> SweepState:
        """The retention sweep's state (a fresh one if never saved)."""
        ...

    def save_sweep(self, state: SweepState) -> None:
        """Persist every field of the retention sweep's state."""
        ...


class Leases(Protocol):
    """Who does a piece of pipeline work when several processes share one store.

    ``claim(key)`` returns True when this process now holds ``key`` and no one else does, in any
    process; False when it is held (the caller skips that work: the holder does it). Never
    blocks. A claim lasts until ``release(key)`` or until its holder dies (the process, or its
    connection to the store): it never outlives its holder, so work a dead process held is
    claimed again by another. Keys name the work, e.g. one session's L1 or one tenant's L2/L3.
    """

    def claim(self, key: str) -> bool: ...

    def release(self, key: str) -> None:
        """Give up ``key`` (held by this process; anything else is ignored)."""
        ...


class SceneMembers(Protocol):
    """L2's source of truth for which scene file holds each consolidated atom of a tenant (the
    scene index file is rebuilt from it and the scene files, so losing that file loses nothing)."""

    def get(self, tenant: Tenant) -> dict[str, str]:
        """``atom id -> scene file name`` for the tenant (empty before its first L2 run)."""
        ...

    def replace(self, tenant: Tenant, membership: Mapping[str, str]) -> None:
        """Make the tenant's membership exactly ``membership``, in one transaction."""
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

    @property
    def members(self) -> SceneMembers: ...

    @property
    def leases(self) -> Leases: ...

    def check(self) -> list[str]:
        """What the store finds wrong with itself, one line each (e.g. mirrors out of step with
        the tables); cheap enough for ``status``."""
        ...

    def tenants(self) -> list[Tenant]:
        """Every tenant with anything stored: records, vectors, scene membership or pipeline
        state; by user, then agent."""
        ...

    def erase(self, tenant: Tenant) -> Erased:
        """Remove every row of ``tenant``: messages and atoms (every version) with their keyword
        index rows, vectors, scene membership, L1 and L2/L3 pipeline state, in one transaction;
        then the tenant's lines of any mirror (other lines untouched). Idempotent: run again after
        a crash, it finishes. Other tenants' rows are left exactly as they were."""
        ...

    def compact(self) -> list[str]:
        """Give the space of deleted rows back so their bytes are gone from the storage (SQLite:
        keyword indexes merged, ``VACUUM``, WAL truncated; PostgreSQL: ``VACUUM FULL`` of the
        tables). Returns what could not be done, in words (empty: done)."""
        ...

    def repair(self) -> list[str]:
        """Fix what ``check`` finds that the store can fix alone; one line per repair done."""
        ...

    def close(self) -> None: ...


# --- L2 scenes and the L3 persona -----------------------------------------------------------------


class Folder(Protocol):
    """A flat folder of Markdown documents: everything a scene or persona writer may touch.

    Names follow ``layers.folder.check_name``: a file name directly in the folder (no folder part,
    no ``..``, not absolute, not hidden), ending in ``.md``, at most 200 bytes; a persona's folder
    accepts ``persona.md`` alone. A refused name raises ``PathError``, and so does a name that is
    held by something other than a document (a symlink, a folder): it is never read or written
    through. ``write`` drops control characters, replaces the document whole (a reader sees the
    old or the new text, never a mix) and refuses a text over ``MAX_DOCUMENT_BYTES``
    (``InputError``). Raises ``StorageError`` when the storage refuses.
    """

    def names(self) -> list[str]:
        """The folder's documents, by name."""
        ...

    def read(self, name: str) -> str | None:
        """The document's text (bytes that are not UTF-8 replaced), or None when there is none."""
        ...

    def write(self, name: str, text: str) -> None:
        """Create the document or replace its text."""
        ...


class SceneStore(Protocol):
    """L2 storage of a tenant: scene files, their index and backups of the scene folder.

    Scene files are the source of truth; the index is rebuilt from them by the pipeline.
    Every write replaces a file atomically.
    """

    def folder(self, tenant: Tenant) -> Folder:
        """The tenant's scene documents (``scene_blocks/``) as a ``Folder``: all a scene writer may
        touch. Its documents are what ``load`` parses."""
        ...

    def load(self, tenant: Tenant) -> list[Scene]:
        """Every readable scene file of the tenant, parsed, by name. Symlinks and other files are
        ignored; unreadable ones (binary, not UTF-8, control characters, a broken META block) are
        left out and recorded in ``problems``. Never writes."""
        ...

    def save(self, tenant: Tenant, scene: Scene) -> None:
        """Write ``scene`` to ``scene_blocks/<scene.name>`` in the META format (control characters
        dropped; an unreadable file of that name is set aside in ``.backup/`` first)."""
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
        """The saved scene index (empty when none). Entries that name no valid scene file name are
        dropped and control characters removed (both recorded in ``problems``). Raises
        ``StoreError`` when the file is not an index."""
        ...

    def save_index(self, tenant: Tenant, entries: Sequence[SceneEntry]) -> None:
        """Replace ``.metadata/scene_index.json``."""
        ...

    def backup(self, tenant: Tenant) -> str:
        """``repair`` the scene folder, then snapshot it and the index; prune old snapshots.
        Returns the snapshot id."""
        ...

    def restore(self, tenant: Tenant, snapshot: str) -> None:
        """Make the scene folder and the index byte-identical to ``snapshot``.
        Raises ``StoreError`` when the snapshot is gone."""
        ...

    def tenants(self) -> list[Tenant]:
        """Tenants that have a profile folder."""
        ...

    def problems(self, tenant: Tenant) -> list[FileProblem]:
        """The tenant's unreadable files as this store's latest reads (``load``, ``index``) found
        them, by path; no I/O."""
        ...

    def check(self, tenant: Tenant) -> list[FileProblem]:
        """Read every scene file and the index now and return the unreadable ones. Never writes."""
        ...

    def repair(self, tenant: Tenant) -> list[FileProblem]:
        """Set every unreadable scene file aside in ``.backup/`` and restore the newest readable
        copy from the scene snapshots (when there is one). Returns what it found and did.
        A writer's operation (call it under the tenant's lock)."""
        ...

    def erase(self, tenant: Tenant) -> int:
        """Delete everything stored for the tenant's scenes: files, index, snapshots, set-aside
        copies (the file store: the whole profile folder, so erase the persona first). Returns the
        files (or records) removed; 0 when there was nothing."""
        ...


class PersonaStore(Protocol):
    """L3 storage of a tenant: ``persona.md`` and its backups."""

    def folder(self, tenant: Tenant) -> Folder:
        """A ``Folder`` holding the tenant's ``persona.md`` alone: all a persona writer may touch.
        Its document is what ``read`` returns."""
        ...

    def read(self, tenant: Tenant) -> tuple[str, int] | None:
        """The persona file's text and modification time (ms), or None when there is none or it is
        unreadable (binary, not UTF-8, control characters: recorded in ``problems``). Never writes."""
        ...

    def write(self, tenant: Tenant, text: str) -> None:
        """Replace ``persona.md`` atomically (control characters dropped; an unreadable file there
        is set aside in ``.backup/`` first)."""
        ...

    def backup(self, tenant: Tenant) -> str | None:
        """``repair`` ``persona.md``, then snapshot it and prune old snapshots; None when there is no
        persona (yet, or any more after ``repair``)."""
        ...

    def restore(self, tenant: Tenant, snapshot: str | None) -> None:
        """Put ``persona.md`` back as in ``snapshot`` (None: remove it, there was none)."""
        ...

    def problems(self, tenant: Tenant) -> list[FileProblem]:
        """``persona.md`` when the latest ``read`` found it unreadable; no I/O."""
        ...

    def check(self, tenant: Tenant) -> list[FileProblem]:
        """Read ``persona.md`` now; ``[problem]`` when it is unreadable. Never writes."""
        ...

    def repair(self, tenant: Tenant) -> list[FileProblem]:
        """Set an unreadable ``persona.md`` aside in ``.backup/`` and restore the newest readable
        backup (when there is none the persona is gone and the next L3 run writes a new one)."""
        ...

    def erase(self, tenant: Tenant) -> int:
        """Delete the tenant's persona and every backup of it. Returns the files removed."""
        ...


class SceneWriter(Protocol):
    """Consolidates atoms into the scene documents of ``request.folder`` (and nowhere else).

    Rules: update an existing scene by default; create at most one new scene per call; when at
    ``max_scenes``, merge 2-4 similar scenes before creating one; delete a file by writing
    ``[DELETED]``. Raises ``EngineError`` when it cannot finish (the pipeline restores the backup).
    """

    async def consolidate(self, request: ConsolidationRequest) -> ConsolidationResult: ...


class PersonaWriter(Protocol):
    """Writes the persona body (Markdown, no navigation). Touches ``request.folder`` at most.
    Raises ``EngineError`` when it cannot finish (the pipeline restores the backup)."""

    async def write(self, request: PersonaRequest) -> str: ...


@dataclass(frozen=True, slots=True)
class UpperLayers:
    """The L2/L3 parts a memory needs: where scenes and the persona live, and who writes them."""

    scenes: SceneStore
    persona: PersonaStore
    scene_writer: SceneWriter
    persona_writer: PersonaWriter
