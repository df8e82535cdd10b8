"""Response models of the native API: the facade's records on the wire.

Each model has exactly the fields of the record it carries (a test pins this), so the HTTP client
turns the JSON back into the same dataclasses the library returns. Models are built from the
records with ``from_attributes``; nothing here is imported by the core.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memstrata.models import QueryProcessState


class Wire(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class TenantOut(Wire):
    user_id: str
    agent_id: str


class MessageOut(Wire):
    """An L0 message. Times are epoch milliseconds."""

    id: str
    tenant: TenantOut
    session_key: str
    session_id: str
    role: str
    content: str
    timestamp: int
    recorded_at: int
    name: str | None = None
    seq: int = Field(description="Store-assigned, strictly increasing: the cursor.")
    metadata: dict[str, Any] = Field(description="The custom JSON object given at capture.")


class AtomOut(Wire):
    """An L1 memory atom; ``superseded_by`` is set on versions a newer one replaced."""

    id: str
    tenant: TenantOut
    type: str
    content: str
    priority: int
    scene_name: str
    source_message_ids: list[str]
    metadata: dict[str, Any]
    session_key: str
    created_at: int
    updated_at: int
    version: int
    superseded_by: str | None
    seq: int
    pinned: bool = Field(description="Never swept, expired, merged away or superseded by the pipeline.")
    expires_at: int | None = Field(description="Leaves search and recall at this time (epoch ms).")


class HitOut(Wire):
    layer: str
    id: str
    score: float
    content: str
    source_message_ids: list[str]
    metadata: dict[str, Any]
    rank: int = Field(0, description="Place in the fused ranking the candidates were chosen by.")
    explain: dict[str, float | int | None] = Field(
        default_factory=dict, description="The raw signals behind the score (cosine, keyword, fused)."
    )


class SearchOut(Wire):
    """Ranked hits; ``strategy`` is what ran, ``degradations`` why it differs from what was asked."""

    hits: list[HitOut]
    strategy: str
    degradations: list[str]


class RecallOut(Wire):
    """The context to inject before a prompt."""

    system_context: str
    prepend_context: str
    hits: list[HitOut]
    strategy: str
    degradations: list[str]
    timings_ms: dict[str, float]


class CaptureOut(Wire):
    stored: list[MessageOut]
    duplicates: list[str] = Field(description="Ids already stored: skipped.")
    dropped: list[str] = Field(description="Ids dropped as noise (empty, slash commands, ...).")
    degradations: list[str]
    repeated: list[str] = Field(description="Ids given more than once in this request: the first counts.")


class TurnOut(Wire):
    stored: list[MessageOut]
    duplicates: list[str]
    dropped: list[str]
    method: str = Field(description="How new messages were found: id, position, timestamp or all.")
    replaced: bool = Field(description="The turn's user message was replaced by the clean prompt.")
    degradations: list[str]


class SceneOut(Wire):
    name: str
    summary: str
    heat: int
    created: int
    updated: int
    body: str


class SceneEntryOut(Wire):
    name: str
    summary: str
    heat: int
    created: int
    updated: int
    atom_ids: list[str]


class PersonaOut(Wire):
    tenant: TenantOut
    body: str
    navigation: str
    updated: int


class BackupOut(Wire):
    """A backup of a scene or the persona: its id, and when it was made (epoch ms)."""

    id: str
    made_at: int


class CountsOut(Wire):
    messages: int
    atoms: int
    scenes: int
    persona: int


class SessionStatusOut(Wire):
    tenant: TenantOut
    session_key: str
    cursor: int
    pending: int
    lag: int
    fire_at: int | None
    attempts: int
    last_error: str | None


class TenantStatusOut(Wire):
    tenant: TenantOut
    l2_cursor: int
    l2_fire_at: int | None
    l2_attempts: int
    l2_error: str | None
    new_atoms: int
    l3_pending: bool
    l3_attempts: int
    l3_error: str | None
    last_l2: int | None
    last_l3: int | None


class QueryEmbeddingOut(Wire):
    queries: int = Field(description="Search queries embedded or answered from the cache.")
    cached: int = Field(description="Queries answered from the query-vector cache.")
    passes: int = Field(description="Forward passes run for the others.")
    batched: int = Field(description="Queries that shared a pass with another.")
    largest: int = Field(description="The most queries one pass held.")
    wait_ms_total: float
    wait_ms_max: float = Field(description="Longest wait behind a running pass (ms).")
    cache_entries: int
    background_pauses: int = Field(description="Background batch passes that paused for a query.")
    background_paused_ms: float
    process: QueryProcessState = Field(
        description="The server's query process (embedding.query_process): off, or its state."
    )
    process_passes: int = Field(description="Query passes the query process ran.")
    process_failures: int = Field(description="Times it failed (those queries ran in the server).")
    batch_process: QueryProcessState = Field(
        description="The server's batch process (embedding.batch_process): off, or its state."
    )
    batch_process_passes: int = Field(description="Background batches the batch process embedded.")
    batch_process_failures: int = Field(description="Times it failed (those batches ran in the server).")


class PaceOut(Wire):
    steps: int = Field(description="Steps the background pipeline took in its loop.")
    deferred: int = Field(description="Steps that first waited for a lull in the requests.")
    waited_ms: float = Field(description="Their waits in all (ms).")
    capped: int = Field(
        description="Steps that went ahead after the longest wait (requests without a pause)."
    )


class StatusOut(Wire):
    sessions: list[SessionStatusOut]
    messages: int
    atoms: int
    embedder: str | None
    vectors_note: str | None
    tenants: list[TenantStatusOut]
    strategy: str = Field(description="The search strategy in force: hybrid, or keyword.")
    unembedded: int = Field(description="Records waiting for a vector.")
    read_only: bool
    problems: list[str] = Field(description="What is degraded, in words.")
    last_sweep: int | None = Field(description="When the retention sweep last ran (epoch ms).")
    proxy: dict[str, int] | None = Field(
        None, description="The LLM proxy's counters since the server started (docs/proxy.md)."
    )
    query_embedding: QueryEmbeddingOut | None = Field(
        default=None, description="How search queries were embedded: batched passes, cache hits."
    )
    background: PaceOut = Field(
        description="How the background pipeline waited for requests in flight (docs/design.md)."
    )
    degradations: dict[str, int] = Field(
        default_factory=dict,
        description="What the engines got by without since the server started, by name "
        "(structured_output_fallback, context_shrunk, truncated_replies, dropped_items, ...).",
    )


class ErasedOut(Wire):
    messages: int
    atoms: int
    vectors: int
    scene_members: int
    sessions: int
    tenant_states: int
    mirror_lines: int


class ForgetOut(Wire):
    """What forgetting a tenant removed, per layer; ``reclaimed``: the database was rewritten and
    its WAL truncated, so the bytes are gone from disk (``notes`` says why not)."""

    tenants: list[TenantOut]
    erased: ErasedOut
    files: int = Field(description="Profile files removed: scenes, index, persona, backups.")
    reclaimed: bool
    notes: list[str]


class SweepOut(Wire):
    at: int
    messages: int = Field(description="Messages past capture.retention_days, deleted.")
    marked: int = Field(description="Atoms whose source messages were swept (they keep their text).")
    expired: int = Field(description="Atoms past their expires_at, deleted.")
    aged: int = Field(description="Atoms past retention.atoms_days, deleted.")
    tenants: list[TenantOut]


class ImportOut(Wire):
    sessions: int
    stored: int
    duplicates: int
    repeated: int
    dropped: int
    degradations: list[str]
    extracted: int = Field(0, description="Sessions extracted by L1 (with processing).")
    failed: int = Field(0, description="L1 sessions and L2/L3 tenants whose run failed (see status).")
    atoms: int = Field(0, description="Atoms L1 made.")


class RunAllOut(Wire):
    l1: int = Field(description="L1 session runs attempted.")
    upper: int = Field(description="L2 and L3 runs attempted.")
    l1_failed: int = Field(0, description="L1 runs that failed (recorded in status, retried later).")
    atoms: int = Field(0, description="Atoms L1 committed in this call.")
    upper_failed: int = Field(0, description="Tenants whose L2 or L3 run is failing after this call.")


class KeyOut(Wire):
    """A scoped key as stored (never the key itself). Times are epoch milliseconds."""

    id: str
    label: str
    tenants: list[list[str | None]] = Field(description="[user_id, agent_id or null] pairs.")
    created_at: int
    revoked_at: int | None = None


class IssuedKeyOut(Wire):
    """A new key: ``secret`` is the key, shown this once (only its digest is stored)."""

    key: KeyOut
    secret: str


class DeletedOut(BaseModel):
    deleted: list[str] = Field(description="Ids deleted (for atoms: with their older versions).")


class DoneOut(BaseModel):
    ok: bool = True


class RunsOut(BaseModel):
    runs: int


class RepairedOut(BaseModel):
    repaired: list[str] = Field(description="One line per repair; empty when nothing needed one.")


class EmbeddedOut(BaseModel):
    embedded: int


class PipelineHealth(BaseModel):
    sessions: int
    lag: int = Field(description="Stored messages not yet extracted into atoms, all sessions.")
    failing: int = Field(description="Sessions and tenants whose last run failed.")


class HealthOut(BaseModel):
    status: str = Field(description="ok, or degraded when a pipeline stage keeps failing.")
    version: str
    store: str
    embedder: str | None
    pipeline: PipelineHealth
    last_errors: list[str]
