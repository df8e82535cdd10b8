"""Operations that drive the pipeline, look after the store and forget on purpose."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Annotated, ClassVar

from pydantic import Field

from memstrata import models as m
from memstrata.models import DEFAULT, Atom, ForgetReport, SceneEntry, SweepReport
from memstrata.operations.base import Key, Millis, Operation, Route
from memstrata.pipeline.coordinator import RunAllReport


@dataclass(frozen=True, slots=True)
class RunPending(Operation[int]):
    """Run every pipeline stage that is due now (vectors, L1, then L2 and L3), until nothing
    is. Returns runs attempted."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/pipeline/run", key="runs", idempotent=False)


@dataclass(frozen=True, slots=True)
class RunAll(Operation[RunAllReport]):
    """Process everything now, due or not: vectors, L1 on every session backlog, then L2 and L3
    on every tenant with new atoms (import, CLI). Failures are recorded in ``status`` and
    retried later."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/pipeline/run-all", idempotent=False)


@dataclass(frozen=True, slots=True)
class RequestPersona(Operation[None]):
    """Ask for the tenant's persona to be rewritten (runs with the next ``run_pending``)."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/persona/request")
    reason: Annotated[str, Field(max_length=500)] = "explicit request"
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class EndSession(Operation[None]):
    """The session is over: extract what is pending for it now."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/sessions/end")
    session_key: Key = DEFAULT
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class Status(Operation[m.Status]):
    """The pipeline per session and tenant, counts, the embedder and what is degraded."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/status")


@dataclass(frozen=True, slots=True)
class Repair(Operation[list[str]]):
    """Make the store and the profile files whole again: mirrors rewritten from the database
    where they disagree with it, unreadable scene and persona files set aside and restored from
    their newest readable backup. Returns one line per repair (empty: nothing to repair)."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/repair", key="repaired", idempotent=False)


@dataclass(frozen=True, slots=True)
class Reindex(Operation[int]):
    """Re-embed every record without a vector (all of them after an embedder change)."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/reindex", key="embedded", idempotent=False)


@dataclass(frozen=True, slots=True)
class Forget(Operation[ForgetReport]):
    """Erase a tenant for good (every agent of ``user_id`` when ``agent_id`` is None): its
    messages, atoms and their versions, keyword rows and vectors, scene membership, pipeline
    state, JSONL mirror lines, scene and persona files with their backups (the whole profile
    folder); then the database is rewritten and its WAL truncated so the text is gone from
    disk. The pipeline is held off meanwhile. Returns what was removed. Run again after a
    crash, it finishes the job."""

    ROUTE: ClassVar[Route] = Route("DELETE", "/v1/tenants")
    _: KW_ONLY
    user_id: str
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class PinAtom(Operation[Atom]):
    """Pin (``pinned=False``: unpin) the current atom, in place: a pinned atom never expires
    and is never swept, merged away or superseded by the pipeline (only ``update_atom``
    replaces it, and the new version stays pinned). A superseded atom is a ``ConflictError``
    naming the current version."""

    ROUTE: ClassVar[Route] = Route("PUT", "/v1/atoms/{atom_id}/pin")
    atom_id: str
    pinned: bool = True
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class SetAtomTtl(Operation[Atom]):
    """Give the current atom a time to live, in place: ``expires_at`` (epoch ms or ISO 8601)
    or ``ttl_seconds`` from now; neither clears it. From that time the atom leaves search and
    recall (unless pinned), and the next sweep deletes it."""

    # Not idempotent with ttl_seconds (relative to the server's now); an absolute time is.
    ROUTE: ClassVar[Route] = Route("PUT", "/v1/atoms/{atom_id}/ttl", unless="ttl_seconds")
    atom_id: str
    _: KW_ONLY
    expires_at: Millis | Annotated[str, Field(max_length=64)] | None = None
    ttl_seconds: Annotated[float, Field(gt=0, le=10**11)] | None = None
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class Sweep(Operation[SweepReport]):
    """Run the retention sweep now, whatever its schedule (it also runs daily at
    ``retention.sweep_at`` in the pipeline): messages past ``capture.retention_days``,
    expired atoms, atoms past ``retention.atoms_days``. Returns what it removed."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/pipeline/sweep", idempotent=False)


@dataclass(frozen=True, slots=True)
class RebuildScenes(Operation[list[SceneEntry]]):
    """Re-consolidate the tenant's scenes from its current atoms now (every scene file is
    written again; heat starts over), then write its persona afresh. Returns the new scene
    index. Raises ``EngineError`` when the L2 run fails (the scenes are restored, and the
    rebuild stays due: the pipeline retries it)."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/scenes/rebuild", idempotent=False)
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT
