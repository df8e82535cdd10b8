"""The records memstrata passes around, per layer and purpose. Import them from here.

records     Tenant, Message, Atom (L0, L1) and their enums
filters     metadata filters (``{"app": "crm"}``, ``{"app": {"in": [...]}}``), parsed and checked
search      filters per layer, scored store primitives, hits and results
scenes      Scene, SceneEntry (L2), Persona (L3), Backup (of either)
state       durable pipeline state: SessionState (L1), TenantState (L2/L3), SweepState
forgetting  what erasing a tenant, a retention sweep and an export report
engine_io   what engines see and answer: windows, drafts, dedup, consolidation, persona requests
chat        chat messages, tool calls and replies
keys        a server's scoped API keys (stored as digests)
degradations  counts of what an engine got by without (for status)
json_input  JSON from outside decoded, every failure one ``InputError``
validation  input checked by pydantic models, reported as one ``InputError`` naming the item
"""

from memstrata.models.chat import ChatMessage, ChatReply, ResponseSchema, ToolCall, ToolSpec
from memstrata.models.degradations import Degradations
from memstrata.models.engine_io import (
    AtomDraft,
    ConsolidationResult,
    DedupAction,
    DedupDecision,
    ExtractionWindow,
)
from memstrata.models.filters import MetadataCondition, MetadataFilter, metadata_filter
from memstrata.models.forgetting import Erased, ExportReport, ForgetReport, SweepReport
from memstrata.models.keys import ApiKey, IssuedKey, Reach
from memstrata.models.records import (
    DEFAULT,
    ENGINE_KEYS,
    USER_NAME,
    Atom,
    AtomType,
    Layer,
    Message,
    NewMessage,
    Role,
    Tenant,
    custom_keys,
)
from memstrata.models.scenes import Backup, FileProblem, Persona, Scene, SceneEntry
from memstrata.models.search import (
    DEFAULT_LAYERS,
    AtomFilter,
    Hit,
    MessageFilter,
    Scored,
    SearchResult,
    Vectors,
    layer_of,
)
from memstrata.models.state import SessionState, SweepState, TenantState
from memstrata.models.status import (
    Counts,
    QueryEmbeddingStatus,
    QueryPassReport,
    QueryProcessState,
    SessionStatus,
    Status,
    TenantStatus,
)

__all__ = [
    "DEFAULT",
    "DEFAULT_LAYERS",
    "ENGINE_KEYS",
    "USER_NAME",
    "ApiKey",
    "Atom",
    "AtomDraft",
    "AtomFilter",
    "AtomType",
    "Backup",
    "ChatMessage",
    "ChatReply",
    "ConsolidationResult",
    "Counts",
    "DedupAction",
    "DedupDecision",
    "Degradations",
    "Erased",
    "ExportReport",
    "ExtractionWindow",
    "FileProblem",
    "ForgetReport",
    "Hit",
    "IssuedKey",
    "Layer",
    "Message",
    "MessageFilter",
    "MetadataCondition",
    "MetadataFilter",
    "NewMessage",
    "Persona",
    "QueryEmbeddingStatus",
    "QueryPassReport",
    "QueryProcessState",
    "Reach",
    "ResponseSchema",
    "Role",
    "Scene",
    "SceneEntry",
    "Scored",
    "SearchResult",
    "SessionState",
    "SessionStatus",
    "Status",
    "SweepReport",
    "SweepState",
    "Tenant",
    "TenantState",
    "TenantStatus",
    "ToolCall",
    "ToolSpec",
    "Vectors",
    "custom_keys",
    "layer_of",
    "metadata_filter",
]
