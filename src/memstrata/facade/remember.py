"""Remember a note now: an atom at once, linked to a stored source message, searchable on return."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from memstrata import operations as ops
from memstrata.errors import InputError
from memstrata.facade.core import FacadeCore, operation
from memstrata.models import Atom, AtomType, Tenant
from memstrata.operations import arguments as args
from memstrata.pipeline.l1.commit import commit_atoms

# The session that holds remembered notes: every message in it has its atom, so its L1 cursor
# always stands at its last message and the pipeline never extracts a note a second time.
REMEMBER_SESSION = "remembered"
# A note the caller asked to keep outranks what extraction guessed (the offline engine's persona
# atoms sit at 50-70), so it wins a tie in the persona and in scene consolidation.
REMEMBER_PRIORITY = 80


class RememberMethods(FacadeCore):
    @operation(ops.Remember)
    async def remember(self, op: ops.Remember) -> Atom:
        self._writable("remember")
        tenant = args.tenant(op.user_id, op.agent_id)
        note = args.note(op.text)
        kind = args.atom_type(op.type) or AtomType.PERSONA
        extra = args.metadata(op.metadata)
        async with self._scheduler.session_held(tenant, REMEMBER_SESSION):
            atom, new = await asyncio.to_thread(self._remember, tenant, note, kind, extra)
        if new:
            self._pipeline.on_atoms(tenant)  # it joins a scene at the next L2 run
            self._pipeline.wake()
        return atom

    def _remember(
        self, tenant: Tenant, note: str, kind: AtomType, extra: dict[str, Any]
    ) -> tuple[Atom, bool]:
        """The note's atom, and whether it is new (call while the session is held)."""
        mid = _note_id(tenant, note)
        message = {"id": mid, "role": "user", "content": note, "metadata": extra}
        done = self._recorder.record(tenant, REMEMBER_SESSION, REMEMBER_SESSION, [message])
        if done.dropped:
            raise InputError("the note holds nothing to remember once cleaned", item="text")
        if not done.stored:  # remembered before: the atom that note made
            made = [a for a in self._store.atoms.citing(tenant, [mid]) if a.superseded_by is None]
            if made:
                return made[-1], False
            stored = self._store.messages.get(tenant, [mid])
        else:
            stored = list(done.stored)
        source = stored[0]
        now = self._clock.now_ms()
        atom = Atom(
            id="a-" + mid[2:],
            tenant=tenant,
            type=kind,
            content=source.content,
            priority=REMEMBER_PRIORITY,
            source_message_ids=(source.id,),
            metadata={**extra, "message_time": source.timestamp},
            session_key=REMEMBER_SESSION,
            created_at=now,
            updated_at=now,
        )
        last = self._store.messages.last(tenant, REMEMBER_SESSION)
        cursor = max(source.seq, last.seq if last is not None else 0)
        committed = commit_atoms(self._store, tenant, [atom], {}, (REMEMBER_SESSION, cursor))
        self._vectors.embed_atoms(tenant, committed)  # a failure is left to the embedding backlog
        return (committed[0] if committed else atom), bool(committed)


def _note_id(tenant: Tenant, note: str) -> str:
    """The note's message id, from the tenant and the text: remembering it twice stores it once."""
    raw = f"{tenant.user_id}\x1f{tenant.agent_id}\x1f{note}"
    return "n-" + hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
