"""The records of L0 and L1, and who they belong to.

Plain frozen dataclasses: they cross every boundary (stores, engines, edges) and carry no behaviour
beyond small derived values. Times are integer milliseconds since the epoch (UTC).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from urllib.parse import quote

DEFAULT = "default"
MAX_FOLDER_BYTES = 255  # the file-name limit of common file systems (ext4, xfs, btrfs, APFS, tmpfs)
_PREFIX_BYTES = 180  # of a long folder name: the readable part, before ``#`` and the hash


@dataclass(frozen=True, slots=True)
class Tenant:
    """Who a record belongs to. Every read and write is scoped to exactly one tenant."""

    user_id: str = DEFAULT
    agent_id: str = DEFAULT

    @property
    def folder(self) -> str:
        """A readable, filesystem-safe folder name (ASCII), e.g. ``u=alice,a=default``: the ids
        percent-encoded. When that passes 255 bytes, its first 180 bytes, ``#`` and 32 hex digits of
        a SHA-256 of both ids (``#`` never occurs in the short form, so the two cannot collide); the
        folder then keeps the full ids in its metadata (see ``stores.files.layout``)."""
        plain = f"u={quote(self.user_id, safe='')},a={quote(self.agent_id, safe='')}"
        if len(plain) <= MAX_FOLDER_BYTES:
            return plain
        digest = hashlib.sha256(json.dumps([self.user_id, self.agent_id]).encode()).hexdigest()[:32]
        prefix = plain[:_PREFIX_BYTES]
        escape = prefix.rfind("%", len(prefix) - 2)  # never cut a %XX escape in two
        return f"{prefix[:escape] if escape >= 0 else prefix}#{digest}"

    def __str__(self) -> str:
        return f"{self.user_id}/{self.agent_id}"


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


class AtomType(StrEnum):
    PERSONA = "persona"  # lasting facts about someone: identity, preferences, relationships
    EPISODIC = "episodic"  # something that happened (or will), usually with a time
    INSTRUCTION = "instruction"  # how the assistant should behave


class Layer(StrEnum):
    L0 = "L0"  # raw messages
    L1 = "L1"  # memory atoms
    L2 = "L2"  # scene documents


# The metadata key of the name a nameless user gave ("I'm Ana"), set on the atom at extraction:
# the persona and the scenes call "the user" by it (docs/design.md, L1).
USER_NAME = "user_name"

# Metadata keys memstrata itself writes and reads on records (when a memory happened or was said,
# who said it, the offline engine's parts, retention marks, a hit's message fields). A caller's
# keys of these names stay on its message but are not carried onto the atoms made from it or into
# its search hits, so custom metadata never changes how a memory is dated or attributed.
ENGINE_KEYS = frozenset(
    {
        "message_time", "mentioned_at", "activity_start", "activity_end", "speaker", "form", "lang",
        "asker", "statement", "sources_swept", "timestamp", "name", "role", "session_key", "session_id",
        USER_NAME,
    }
)  # fmt: skip


def custom_keys(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata`` without the ``ENGINE_KEYS``."""
    return {k: v for k, v in metadata.items() if k not in ENGINE_KEYS}


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message as a caller hands it to ``capture``. ``id``, ``timestamp`` and ``metadata`` (a
    JSON object kept on the message, see ``Message``) are optional."""

    role: Role | str
    content: str
    id: str | None = None
    name: str | None = None
    timestamp: int | None = None
    metadata: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """An L0 record. ``seq`` is assigned by the store and strictly increases: it is the cursor.
    ``metadata`` is the caller's JSON object given at capture (searches, recall and listings can
    filter on it); atoms made from the message inherit its keys."""

    id: str
    tenant: Tenant
    session_key: str
    session_id: str
    role: Role
    content: str
    timestamp: int
    recorded_at: int
    name: str | None = None
    seq: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Atom:
    """An L1 memory atom: one standalone statement, linked to the messages it came from.

    ``pinned`` atoms are never swept, merged away or superseded by the pipeline (only an explicit
    update replaces them); ``expires_at`` (ms) takes an unpinned atom out of search and recall at
    that time, and the next sweep deletes it. Both change in place, without a new version."""

    id: str
    tenant: Tenant
    type: AtomType
    content: str
    priority: int = 50
    scene_name: str = ""
    source_message_ids: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    session_key: str = ""
    created_at: int = 0
    updated_at: int = 0
    version: int = 1
    superseded_by: str | None = None
    seq: int = 0
    pinned: bool = False
    expires_at: int | None = None

    def expired(self, at: int) -> bool:
        """Whether the atom's time to live is over at ``at`` (ms); a pinned atom never expires."""
        return not self.pinned and self.expires_at is not None and self.expires_at <= at
