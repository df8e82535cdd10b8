"""Response models of the native API: the facade's records on the wire.

Each model is built from the record it carries (``wired``): the record's fields in order, each
with its JSON type (enums by value, tuples as lists, nested records as their models), so a field
added to a record is on the wire without a line here, and the HTTP client reads the JSON back
into the same dataclasses the library returns. Only the descriptions are written here. Models
are built from the records with ``from_attributes``; nothing here is imported by the core.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from memstrata import models as m
from memstrata.interchange.sessions import ImportReport
from memstrata.layers.host_turns import TurnResult
from memstrata.layers.l0.recorder import CaptureResult
from memstrata.pipeline.coordinator import RunAllReport
from memstrata.recall import RecallResult


class Wire(BaseModel):
    model_config = ConfigDict(from_attributes=True)


W = typing.TypeVar("W", bound=Wire)
_MODELS: dict[type, type[Wire]] = {}  # record -> its model, for records nested in others


def _json_type(tp: Any) -> Any:
    """The type a record's field has on the wire."""
    if tp in _MODELS:
        return _MODELS[tp]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return str
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return _one_of([_json_type(a) for a in args])
    if origin in (tuple, list, Sequence):  # a list of the items (a pair's two types: either)
        items = [_json_type(a) for a in args if a is not Ellipsis]
        return list.__class_getitem__(_one_of(items) if items else Any)
    if origin in (dict, Mapping):
        key, value = args or (str, Any)
        return dict.__class_getitem__((key, _json_type(value)))
    return tp


def _one_of(options: list[Any]) -> Any:
    return typing.Union.__getitem__(tuple(options)) if len(options) > 1 else options[0]


def wired(record: type, **described: str) -> Callable[[type[W]], type[W]]:
    """Make the class below the response model of ``record`` (a dataclass): its fields, each
    required, ``described`` the OpenAPI descriptions of some; the class gives the name and the
    model's description (its docstring) and declares nothing else (but what the server adds of
    its own: ``StatusOut.proxy``)."""

    def build(cls: type[W]) -> type[W]:
        hints = typing.get_type_hints(record)
        fields: dict[str, Any] = {}
        for f in dataclasses.fields(record):
            tp = _json_type(hints[f.name])
            fields[f.name] = (tp, Field(description=described[f.name]) if f.name in described else ...)
        if unknown := set(described) - set(fields):
            raise TypeError(f"{record.__name__} has no fields {sorted(unknown)}")
        model: type[W] = create_model(
            cls.__name__, __base__=cls, __doc__=cls.__doc__, __module__=cls.__module__, **fields
        )
        _MODELS[record] = model
        return model

    return build


@wired(m.Tenant)
class TenantOut(Wire):
    pass


@wired(
    m.Message,
    seq="Store-assigned, strictly increasing: the cursor.",
    metadata="The custom JSON object given at capture.",
)
class MessageOut(Wire):
    """An L0 message. Times are epoch milliseconds."""


@wired(
    m.Atom,
    pinned="Never swept, expired, merged away or superseded by the pipeline.",
    expires_at="Leaves search and recall at this time (epoch ms).",
)
class AtomOut(Wire):
    """An L1 memory atom; ``superseded_by`` is set on versions a newer one replaced."""


@wired(
    m.Hit,
    rank="Place in the fused ranking the candidates were chosen by.",
    explain="The raw signals behind the score (cosine, keyword, fused).",
)
class HitOut(Wire):
    pass


@wired(m.SearchResult)
class SearchOut(Wire):
    """Ranked hits; ``strategy`` is what ran, ``degradations`` why it differs from what was asked."""


@wired(RecallResult)
class RecallOut(Wire):
    """The context to inject before a prompt."""


@wired(
    CaptureResult,
    duplicates="Ids already stored: skipped.",
    dropped="Ids dropped as noise (empty, slash commands, ...).",
    repeated="Ids given more than once in this request: the first counts.",
)
class CaptureOut(Wire):
    pass


@wired(
    TurnResult,
    method="How new messages were found: id, position, timestamp or all.",
    replaced="The turn's user message was replaced by the clean prompt.",
)
class TurnOut(Wire):
    pass


@wired(m.Scene)
class SceneOut(Wire):
    pass


@wired(m.SceneEntry)
class SceneEntryOut(Wire):
    pass


@wired(m.Persona)
class PersonaOut(Wire):
    pass


@wired(m.Backup)
class BackupOut(Wire):
    """A backup of a scene or the persona: its id, and when it was made (epoch ms)."""


@wired(m.Counts)
class CountsOut(Wire):
    pass


@wired(m.SessionStatus)
class SessionStatusOut(Wire):
    pass


@wired(m.TenantStatus)
class TenantStatusOut(Wire):
    pass


@wired(
    m.QueryEmbeddingStatus,
    queries="Search queries embedded or answered from the cache.",
    cached="Queries answered from the query-vector cache.",
    passes="Forward passes run for the others.",
    batched="Queries that shared a pass with another.",
    largest="The most queries one pass held.",
    wait_ms_max="Longest wait behind a running pass (ms).",
    process="The server's query process (embedding.query_process): off, or its state.",
    process_passes="Query passes the query process ran.",
    process_failures="Times it failed (those queries ran in the server).",
)
class QueryEmbeddingOut(Wire):
    pass


@wired(
    m.Status,
    strategy="The search strategy in force: hybrid, or keyword.",
    unembedded="Records waiting for a vector.",
    problems="What is degraded, in words.",
    last_sweep="When the retention sweep last ran (epoch ms).",
    query_embedding="How search queries were embedded: batched passes, cache hits.",
    degradations="What the engines got by without since the server started, by name "
    "(structured_output_fallback, context_shrunk, truncated_replies, dropped_items, ...).",
)
class StatusOut(Wire):
    """The memory's status; ``proxy`` is the server's own (its LLM proxy), not the memory's."""

    proxy: dict[str, int] | None = Field(
        None, description="The LLM proxy's counters since the server started (docs/proxy.md)."
    )


@wired(m.Erased)
class ErasedOut(Wire):
    pass


@wired(m.ForgetReport, files="Profile files removed: scenes, index, persona, backups.")
class ForgetOut(Wire):
    """What forgetting a tenant removed, per layer; ``reclaimed``: the database was rewritten and its WAL truncated, so the bytes are gone from disk (``notes`` says why not)."""


@wired(
    m.SweepReport,
    messages="Messages past capture.retention_days, deleted.",
    marked="Atoms whose source messages were swept (they keep their text).",
    expired="Atoms past their expires_at, deleted.",
    aged="Atoms past retention.atoms_days, deleted.",
)
class SweepOut(Wire):
    pass


@wired(
    ImportReport,
    extracted="Sessions extracted by L1 (with processing).",
    failed="L1 sessions and L2/L3 tenants whose run failed (see status).",
    atoms="Atoms L1 made.",
)
class ImportOut(Wire):
    pass


@wired(
    RunAllReport,
    l1="L1 session runs attempted.",
    upper="L2 and L3 runs attempted.",
    l1_failed="L1 runs that failed (recorded in status, retried later).",
    atoms="Atoms L1 committed in this call.",
    upper_failed="Tenants whose L2 or L3 run is failing after this call.",
)
class RunAllOut(Wire):
    pass


@wired(m.ApiKey, tenants="[user_id, agent_id or null] pairs.")
class KeyOut(Wire):
    """A scoped key as stored (never the key itself). Times are epoch milliseconds."""


@wired(m.IssuedKey)
class IssuedKeyOut(Wire):
    """A new key: ``secret`` is the key, shown this once (only its digest is stored)."""


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
