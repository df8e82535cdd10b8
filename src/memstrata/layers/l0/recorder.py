"""L0 record: turn what a caller hands to ``capture`` into stored messages.

Every message of a call is checked before any is written (one ``InputError`` names the first bad
item, and nothing is stored). Then each is sanitized (noise dropped), given an id and a timestamp
when missing, cut to the size limit, and stored with the text the search index holds for it (with
the previous turn as context). Vectors are written right after when an embedder is ready; a record
left without one (a crash, a failed embedding) is picked up by the embedding backlog.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memstrata.errors import InputError, StorageError
from memstrata.layers.l0.sanitize import sanitize
from memstrata.layers.l0.times import epoch_ms
from memstrata.models import Message, NewMessage, Role, Tenant
from memstrata.models.json_input import json_object
from memstrata.ports import Clock, Store
from memstrata.retrieval.documents import message_body
from memstrata.retrieval.vectors import VectorState

MessageInput = NewMessage | Mapping[str, object]
TRUNCATED = "\n[... {n} more characters not stored: the message was over {limit} characters]"


@dataclass(frozen=True, slots=True)
class CaptureResult:
    """What ``capture`` did.

    ``stored``: the new messages, with seq. ``duplicates``: ids already stored (skipped).
    ``repeated``: ids given more than once in this input: the first one counts, the others are
    skipped. ``dropped``: ids sanitized away as noise. ``degradations``: what went less well than
    asked (a message cut to the size limit; vectors left to the embedding backlog), in words.
    """

    stored: tuple[Message, ...]
    duplicates: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    degradations: tuple[str, ...] = ()
    repeated: tuple[str, ...] = ()


def stable_id(tenant: Tenant, session_key: str, position: int, role: str, content: str) -> str:
    """A message id derived from where and what it is: importing the same history twice stores
    it once, although the file gave no ids."""
    raw = f"{tenant.user_id}\x1f{tenant.agent_id}\x1f{session_key}\x1f{position}\x1f{role}\x1f{content}"
    return "m-" + hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def as_message(m: MessageInput, i: int) -> NewMessage:
    """A caller's message (a ``NewMessage`` or a mapping with its fields), checked."""
    item = f"messages[{i}]"
    if isinstance(m, Mapping):
        unknown = sorted(set(map(str, m)) - {"role", "content", "id", "name", "timestamp", "metadata"})
        if unknown:
            raise InputError(f"unknown field {unknown[0]!r}", item=item)
        if "role" not in m or "content" not in m:
            raise InputError("a message needs 'role' and 'content'", item=item)
        m = NewMessage(**m)  # type: ignore[arg-type]
    elif not isinstance(m, NewMessage):
        raise InputError("a message must be a NewMessage or a mapping", item=item)
    if not isinstance(m.content, str):
        raise InputError("must be a string", item=f"{item}.content")
    for field in ("id", "name"):
        value = getattr(m, field)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise InputError("must be a non-empty string when given", item=f"{item}.{field}")
    return NewMessage(
        to_role(m.role, f"{item}.role"),
        m.content,
        m.id,
        m.name,
        epoch_ms(m.timestamp, f"{item}.timestamp"),
        json_object(m.metadata, f"{item}.metadata"),
    )


def to_role(value: object, item: str) -> Role:
    try:
        return Role(str(value).lower())
    except ValueError:
        raise InputError(f"must be 'user' or 'assistant', got {value!r}", item=item) from None


class Recorder:
    """Stores captured messages of one session at a time (blocking: run it in a worker thread)."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        vectors: VectorState,
        *,
        max_chars: int,
        with_previous: bool,
        on_stored: Callable[[Tenant, str, int], None],
    ) -> None:
        self._store = store
        self._clock = clock
        self._vectors = vectors
        self._max_chars = max_chars
        self._with_previous = with_previous
        self._on_stored = on_stored  # (tenant, session key, user turns): the scheduler's counter

    def record(
        self,
        tenant: Tenant,
        session_key: str,
        session_id: str,
        messages: Sequence[MessageInput],
        recorded_at: Mapping[str, int] | None = None,
        *,
        embed: bool = True,
    ) -> CaptureResult:
        """Check every message, then store the batch. Raises ``InputError`` before writing.
        ``recorded_at`` (imports) keeps the store time a source gives, by message id. Without
        ``embed`` the new messages are left to the embedding backlog (a running pipeline drains it
        at once), so the caller does not wait for the model."""
        batch = [as_message(m, i) for i, m in enumerate(messages)]
        now = self._clock.now_ms()
        ready, dropped, repeated, notes = self._prepare(
            tenant, session_key, session_id, batch, now, recorded_at or {}
        )
        stored = self._store.messages.append(ready)
        stored_ids = {m.id for m in stored}
        duplicates = tuple(m.id for m, _ in ready if m.id not in stored_ids)
        if embed:
            notes += self._vectors.embed_messages(tenant, stored)
        if stored:
            try:
                self._on_stored(tenant, session_key, sum(1 for m in stored if m.role == Role.USER) or 1)
            except StorageError as exc:
                # The messages are committed: raising now would tell the caller they were not, and
                # its retry would find duplicates. The schedule is derived state (the L1 backlog is
                # read from the messages past the session's cursor), so say what waits and go on.
                notes.append(
                    f"stored, but the pipeline's schedule for session {session_key!r} could not be "
                    f"saved ({exc.message}): its messages wait for the session's next capture, "
                    "run_all or the next start"
                )
        return CaptureResult(tuple(stored), duplicates, tuple(dropped), tuple(notes), tuple(repeated))

    def _prepare(
        self,
        tenant: Tenant,
        session_key: str,
        session_id: str,
        batch: Sequence[NewMessage],
        now: int,
        recorded_at: Mapping[str, int],
    ) -> tuple[list[tuple[Message, str]], list[str], list[str], list[str]]:
        previous = self._store.messages.last(tenant, session_key)
        ready: list[tuple[Message, str]] = []
        dropped: list[str] = []
        repeated: list[str] = []
        notes: list[str] = []
        seen: set[str] = set()
        for i, new in enumerate(batch):
            role = Role(new.role)
            mid = new.id or _fallback_id(tenant, session_key, new, i)
            if mid in seen:
                repeated.append(mid)
                continue
            seen.add(mid)
            text = sanitize(role, new.content)
            if text is None:
                dropped.append(mid)
                continue
            if len(text) > self._max_chars and not _already_cut(text, self._max_chars):
                notes.append(f"message {mid!r} cut to {self._max_chars} characters (it had {len(text)})")
                text = text[: self._max_chars] + TRUNCATED.format(
                    n=len(text) - self._max_chars, limit=self._max_chars
                )
            m = Message(
                id=mid,
                tenant=tenant,
                session_key=session_key,
                session_id=session_id,
                role=role,
                content=text,
                timestamp=new.timestamp if new.timestamp is not None else now,
                recorded_at=recorded_at.get(mid, now),
                name=new.name or None,
                metadata=dict(new.metadata or {}),
            )
            ready.append((m, message_body(m, previous, with_previous=self._with_previous)))
            previous = m
        if repeated:
            notes.append(
                f"{len(repeated)} duplicate ids in the input (the first of each was kept): {', '.join(repeated[:5])}"
            )
        return ready, dropped, repeated, notes


_CUT_NOTE = re.compile(r"\n\[\.\.\. \d+ more characters not stored: the message was over \d+ characters\]\Z")


def _already_cut(text: str, limit: int) -> bool:
    """A message this recorder cut before (re-imported from an export): its note stays, uncut."""
    note = _CUT_NOTE.search(text)
    return note is not None and note.start() <= limit


def _fallback_id(tenant: Tenant, session_key: str, m: NewMessage, index: int) -> str:
    """No id given: a stable hash when the message has its own timestamp (a retried capture then
    stores it once), else a random id (two identical turns are two messages)."""
    if m.timestamp is None:
        return uuid.uuid4().hex
    raw = f"{tenant}|{session_key}|{m.role}|{m.timestamp}|{index}|{m.content}"
    return hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
