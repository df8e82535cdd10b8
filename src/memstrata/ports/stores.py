"""The store of L0, L1, search indexes, pipeline state and scene membership, part by part."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from memstrata.models import (
    ApiKey,
    Atom,
    AtomFilter,
    Erased,
    Message,
    MessageFilter,
    SessionState,
    SweepState,
    Tenant,
    TenantState,
)
from memstrata.ports.search_index import SearchIndex

__all__ = [
    "AtomStore",
    "KeyStore",
    "Leases",
    "MessageLog",
    "PipelineState",
    "SceneMembers",
    "SearchIndex",
    "Store",
]

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

    def ids_of(self, tenant: Tenant, seqs: Sequence[int]) -> dict[int, str]:
        """The ids of the tenant's messages with these seqs, by seq (missing ones left out): what
        search groups its candidates by, without reading their texts."""
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

    def first(self, tenant: Tenant, limit: int) -> list[Message]:
        """The tenant's first ``limit`` messages by time (then seq), read through the tenant's time
        index: the cost does not grow with the tenant's size."""
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

    def sources_of(self, tenant: Tenant, seqs: Sequence[int]) -> dict[int, tuple[str, ...]]:
        """The ``source_message_ids`` of the tenant's atoms with these seqs, by seq (missing ones
        left out), without reading the rest of them."""
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

    def armed(self, *, due_by: int | None = None, limit: int | None = None) -> list[SessionState]:
        """The sessions whose L1 timer is set (``fire_at``), the earliest first; ``due_by``: only
        those due by then (ms); ``limit``: at most this many. The scheduler asks after every
        capture, and every live conversation holds an idle timer: reading every session instead
        grew with the conversations held (measured under the proxy's load)."""
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

    def tenants(self, *, waiting: bool = False) -> list[TenantState]:
        """Every tenant's saved L2/L3 state; with ``waiting``, only the tenants the scheduler may
        have to run: an L2 timer set, or more L3 requests than runs done. The scheduler asks after
        every capture; reading every tenant instead grew with the tenants a server ever held."""
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


class KeyStore(Protocol):
    """A server's scoped API keys, by the digest of the key (the key itself is never stored).
    Every read goes to the table, so a revocation written by one replica is seen by the next
    request on any other."""

    def add(self, key: ApiKey, digest: str) -> None:
        """Store a new key under ``digest`` (ids and digests are unique)."""
        ...

    def find(self, digest: str) -> ApiKey | None:
        """The key with this digest, revoked or not; ``None`` when there is none."""
        ...

    def list(self) -> list[ApiKey]:
        """Every key, revoked ones too, oldest first."""
        ...

    def revoke(self, key_id: str, at: int) -> ApiKey | None:
        """Mark the key revoked at ``at`` (ms; a key revoked before keeps its time); the key as it
        now is, or ``None`` when there is no such key."""
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

    @property
    def keys(self) -> KeyStore: ...

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
