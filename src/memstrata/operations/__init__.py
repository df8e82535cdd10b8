"""The API's one declaration: every operation's parameters, result and HTTP route.

Each public method of ``AsyncMemory`` (and so of ``Memory``, ``MemoryClient`` and
``AsyncMemoryClient``) is declared here once, as a frozen dataclass whose fields are its
parameters (see ``base``). The facade's method is built from it (``facade.core.operation``) and
receives one instance; the HTTP client's method is built from it (``client.calls``); the
gateway's request model is built from it (``gateway.requests``). A new parameter is one new field
here, read by the facade's body: the client sends it and the gateway accepts it (with the bounds
of its annotation) without another line; a route whose body or query is built from the
declaration passes it on as well.

records    capture, list, read, edit, delete and count each layer's records
queries    search, recall and the host turn lifecycle
upkeep     the pipeline, the store's repair, forgetting, pinning and expiry
history    imports and exports
keys       scoped API keys (admin routes over HTTP)
api        MemoryApi (async) and BlockingMemoryApi: the memory an edge holds, member by member
arguments  the checks and conversions of the declared arguments (the facade's, the edges' tenant)
"""

from __future__ import annotations

from typing import Any

from memstrata.operations.api import BlockingMemoryApi, MemoryApi, Who, perform
from memstrata.operations.base import Operation, Route, hints_of, result_of, signature_of
from memstrata.operations.history import (
    Export,
    ImportExport,
    ImportSeed,
    ImportSessions,
    ImportTdai,
    Progress,
)
from memstrata.operations.keys import CreateKey, Keys, RevokeKey, VerifyKey
from memstrata.operations.queries import (
    BeforePrompt,
    Recall,
    Remember,
    Search,
    SearchConversations,
    TurnCommitted,
)
from memstrata.operations.records import (
    Atoms,
    Capture,
    Counts,
    DeleteAtoms,
    DeleteMessages,
    DeleteScene,
    GetAtom,
    GetMessage,
    Messages,
    Persona,
    PersonaBackups,
    ReadPersonaBackup,
    ReadScene,
    ReadSceneBackup,
    SceneBackups,
    Scenes,
    Tenants,
    UpdateAtom,
    WritePersona,
    WriteScene,
)
from memstrata.operations.upkeep import (
    EndSession,
    Forget,
    PinAtom,
    RebuildScenes,
    Reindex,
    Repair,
    RequestPersona,
    RunAll,
    RunPending,
    SetAtomTtl,
    Status,
    Sweep,
)

ALL: tuple[type[Operation[Any]], ...] = (
    Capture,
    Messages,
    Atoms,
    Persona,
    Scenes,
    ReadScene,
    SceneBackups,
    ReadSceneBackup,
    PersonaBackups,
    ReadPersonaBackup,
    Tenants,
    GetMessage,
    DeleteMessages,
    GetAtom,
    UpdateAtom,
    DeleteAtoms,
    WriteScene,
    DeleteScene,
    WritePersona,
    Counts,
    Search,
    SearchConversations,
    Remember,
    Recall,
    BeforePrompt,
    TurnCommitted,
    RunPending,
    RunAll,
    RequestPersona,
    EndSession,
    Status,
    Repair,
    Reindex,
    Forget,
    PinAtom,
    SetAtomTtl,
    Sweep,
    RebuildScenes,
    ImportSessions,
    ImportSeed,
    ImportTdai,
    Export,
    ImportExport,
    CreateKey,
    Keys,
    RevokeKey,
    VerifyKey,
)
BY_NAME = {op.NAME: op for op in ALL}

__all__ = [
    "ALL",
    "BY_NAME",
    "Atoms",
    "BeforePrompt",
    "BlockingMemoryApi",
    "Capture",
    "Counts",
    "CreateKey",
    "DeleteAtoms",
    "DeleteMessages",
    "DeleteScene",
    "EndSession",
    "Export",
    "Forget",
    "GetAtom",
    "GetMessage",
    "ImportExport",
    "ImportSeed",
    "ImportSessions",
    "ImportTdai",
    "Keys",
    "MemoryApi",
    "Messages",
    "Operation",
    "Persona",
    "PersonaBackups",
    "PinAtom",
    "Progress",
    "ReadPersonaBackup",
    "ReadScene",
    "ReadSceneBackup",
    "RebuildScenes",
    "Recall",
    "Reindex",
    "Remember",
    "Repair",
    "RequestPersona",
    "RevokeKey",
    "Route",
    "RunAll",
    "RunPending",
    "SceneBackups",
    "Scenes",
    "Search",
    "SearchConversations",
    "SetAtomTtl",
    "Status",
    "Sweep",
    "Tenants",
    "TurnCommitted",
    "UpdateAtom",
    "VerifyKey",
    "Who",
    "WritePersona",
    "WriteScene",
    "hints_of",
    "perform",
    "result_of",
    "signature_of",
]
