"""Operations on each layer's records: capture (L0), list, read, edit, delete and count."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Annotated, ClassVar

from pydantic import Field

from memstrata import models as m
from memstrata.layers.l0.recorder import CaptureResult, MessageInput
from memstrata.models import DEFAULT, Atom, Message, Scene, SceneEntry, Tenant
from memstrata.operations.base import (
    AtomTypeName,
    Document,
    Filters,
    Id,
    Ids,
    Key,
    Limit,
    Millis,
    Operation,
    Route,
    Seq,
    Short,
)


@dataclass(frozen=True, slots=True)
class Capture(Operation[CaptureResult]):
    """Store messages of one session (L0). A message may carry ``metadata``, a JSON object (at
    most 16 KiB) kept on it and inherited by the atoms made from it. Every message is checked
    first: one bad item is an ``InputError`` naming it, and nothing is stored. Returns once stored: extraction runs in the
    pipeline, and so do the messages' vectors when the pipeline runs in the background (a
    server), else they are made before returning."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/capture")
    messages: Sequence[MessageInput]
    _: KW_ONLY
    session_key: Key = DEFAULT
    session_id: Key | None = None
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class Messages(Operation[list[Message]]):
    """Stored L0 messages by ascending seq; ``user_id=None`` lists every tenant (admin use);
    ``filters`` keeps those whose metadata matches (as in ``search``)."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/messages")
    _: KW_ONLY
    user_id: str | None = DEFAULT
    agent_id: str = DEFAULT
    session_key: Key | None = None
    since: Millis | None = None
    until: Millis | None = None
    limit: Limit = 100
    after_seq: Seq = 0
    filters: Filters | None = None


@dataclass(frozen=True, slots=True)
class Atoms(Operation[list[Atom]]):
    """Stored L1 atoms by ascending seq; ``user_id=None`` lists every tenant (admin use);
    ``filters`` keeps those whose metadata matches (as in ``search``)."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/atoms")
    _: KW_ONLY
    user_id: str | None = DEFAULT
    agent_id: str = DEFAULT
    type: AtomTypeName | None = None
    scene: Short | None = None
    since: Millis | None = None
    until: Millis | None = None
    include_superseded: bool = False
    limit: Limit = 100
    after_seq: Seq = 0
    filters: Filters | None = None


@dataclass(frozen=True, slots=True)
class Persona(Operation[m.Persona | None]):
    """The tenant's persona (body and scene navigation apart), or None before the first one."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/persona")
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class Scenes(Operation[list[SceneEntry]]):
    """The tenant's scene index: one entry per scene file, with the atom ids it consolidates."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/scenes")
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class ReadScene(Operation[Scene]):
    """One scene file, parsed: ``path`` is ``scene_blocks/<name>.md`` (as in the navigation) or
    ``<name>.md``. Raises ``PathError`` for any other path, ``NotFoundError`` for a scene that
    does not exist."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/scenes/{path}")
    path: str
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class SceneBackups(Operation[list[m.Backup]]):
    """The backups holding a scene, newest first. Each is a copy of the tenant's scene folder, taken
    before an L2 run and before ``write_scene`` replaces or ``delete_scene`` deletes a scene; the
    newest ``persona.scene_backup_count`` are kept. Empty for a scene no backup holds."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/scenes/{path}/backups")
    path: str
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class ReadSceneBackup(Operation[Scene]):
    """A scene as the backup ``backup_id`` (from ``scene_backups``) holds it, parsed. Raises
    ``NotFoundError`` when that backup is gone (pruned) or does not hold the scene."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/scenes/{path}/backups/{backup_id}")
    path: str
    backup_id: Id
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class PersonaBackups(Operation[list[m.Backup]]):
    """The persona's backups, newest first: copies taken before an L3 run and before
    ``write_persona`` replaces it; the newest ``persona.backup_count`` are kept."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/persona/backups")
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class ReadPersonaBackup(Operation[m.Persona]):
    """The persona as the backup ``backup_id`` (from ``persona_backups``) holds it, body and
    navigation apart; ``updated`` is when the backup was made. Raises ``NotFoundError`` when it
    is gone (pruned)."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/persona/backups/{backup_id}")
    backup_id: Id
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class Tenants(Operation[list[Tenant]]):
    """Every tenant with messages or scenes in this memory."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/tenants")


@dataclass(frozen=True, slots=True)
class GetMessage(Operation[Message]):
    """One stored L0 message of the tenant. Raises ``NotFoundError``."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/messages/{message_id}")
    message_id: str
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class DeleteMessages(Operation[list[str]]):
    """Delete the tenant's L0 messages with these ids and every message of these sessions.
    Atoms left with no source (every one deleted) are deleted too, and the scenes and persona
    that held them are rewritten at the next L2/L3 run. Returns the message ids deleted."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/messages/delete", key="deleted")
    ids: Ids = ()
    _: KW_ONLY
    session_keys: Annotated[Sequence[Key], Field(max_length=100)] = ()
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class GetAtom(Operation[Atom]):
    """One L1 atom of the tenant (current or superseded). Raises ``NotFoundError``."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/atoms/{atom_id}")
    atom_id: str
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class UpdateAtom(Operation[Atom]):
    """Correct an atom: a new version (new id, version + 1) supersedes it and is returned; the
    old one stays readable. Editing a superseded atom raises ``ConflictError`` naming the
    current version, unless ``follow=True`` (then the current version is edited)."""

    ROUTE: ClassVar[Route] = Route("PATCH", "/v1/atoms/{atom_id}", idempotent=False)
    atom_id: str
    _: KW_ONLY
    content: Annotated[str, Field(min_length=1, max_length=20_000)] | None = None
    type: AtomTypeName | None = None
    priority: Annotated[int, Field(ge=-1, le=100)] | None = None
    scene_name: Short | None = None
    follow: Annotated[bool, Field(description="Edit the current version when this one was superseded.")] = (
        False
    )
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class DeleteAtoms(Operation[list[str]]):
    """Delete the tenant's atoms with these ids and their older versions; returns the ids deleted.
    The scenes and the persona are rewritten without them at the next L2/L3 run."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/atoms/delete", key="deleted")
    ids: Annotated[Ids, Field(min_length=1)]
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class WriteScene(Operation[Scene]):
    """Create or replace a scene (``scene_blocks/<name>.md`` or ``<name>.md``, a normalised
    name). ``create=False`` raises ``NotFoundError`` when it does not exist. Replacing a scene
    backs up the scene folder first (``scene_backups``)."""

    ROUTE: ClassVar[Route] = Route("PUT", "/v1/scenes/{path}")
    path: str
    content: Annotated[
        Document,
        Field(description="The Markdown body (a whole scene file with its META block is accepted too)."),
    ]
    _: KW_ONLY
    summary: Annotated[str, Field(max_length=2_000)] | None = None
    create: bool = True
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class DeleteScene(Operation[bool]):
    """Delete a scene file and its index entry (the scene folder is backed up first); False when
    there was no such scene."""

    ROUTE: ClassVar[Route] = Route("DELETE", "/v1/scenes/{path}", key="ok", missing=(False,))
    path: str
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class WritePersona(Operation[m.Persona]):
    """Replace the tenant's persona body (the current one is backed up first: ``persona_backups``);
    the scene navigation is regenerated."""

    ROUTE: ClassVar[Route] = Route("PUT", "/v1/persona")
    body: Document
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class Counts(Operation[m.Counts]):
    """How many messages (``session_key``, time range), current atoms (``type``, time range),
    scenes (name prefix) and personas (0 or 1) the tenant has."""

    ROUTE: ClassVar[Route] = Route("GET", "/v1/counts")
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT
    session_key: Key | None = None
    type: AtomTypeName | None = None
    since: Millis | None = None
    until: Millis | None = None
    scene_prefix: Annotated[str, Field(max_length=512)] | None = None
