"""``copy_memory``: copy a memory from one store to another (a data directory and a PostgreSQL
database, either way) and verify the copy, layer by layer, by counts and checksums.

The source is opened read-only (stop its writers first: a copy is of one moment). The target must
be empty. Records get new seqs in the target, in the source's order; every seq that state holds
(session and L2 cursors) is mapped to the record it named. Keyword index texts are computed again
(``retrieval/documents.py``, as ``reindex`` does); vectors are copied as they are, with the model
that made them. Scene and persona backups are not copied (each is a moment of a run already done).
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from memstrata.errors import InputError
from memstrata.interchange.migrate import digest as dg
from memstrata.models import Atom, Layer, Message, Tenant
from memstrata.ports import Store, UpperLayers
from memstrata.retrieval.documents import atom_body, message_body
from memstrata.settings import Settings

log = logging.getLogger(__name__)
Progress = Callable[[str, int], None]  # (what, records done)


@dataclass(slots=True)
class MigrationReport:
    """Per layer: the source's and the copy's fingerprint; ``ok`` when all agree."""

    source: list[dg.Digest] = field(default_factory=list)
    target: list[dg.Digest] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.source) and self.source == self.target

    def lines(self) -> list[str]:
        out = []
        for a, b in zip(self.source, self.target, strict=True):
            verdict = "ok" if a == b else "DIFFERENT"
            out.append(
                f"{a.layer}: {a.count} -> {b.count}, sha256 {a.sha256[:12]} -> {b.sha256[:12]} {verdict}"
            )
        return out


@dataclass(slots=True)
class _SeqMap:
    """Old seq -> new seq of one layer, in ascending old order (for 'at or before' lookups)."""

    old: list[int] = field(default_factory=list)
    new: list[int] = field(default_factory=list)

    def add(self, old: int, new: int) -> None:
        self.old.append(old)
        self.new.append(new)


def copy_memory(
    src: Store,
    src_upper: UpperLayers,
    dst: Store,
    dst_upper: UpperLayers,
    settings: Settings,
    progress: Progress | None = None,
) -> MigrationReport:
    """Copy the memory in ``src`` into the empty ``dst``; returns the verification. Raises
    ``InputError`` when the target holds anything or the source has a run to restore. The
    caller opens both (``wiring.migrate``: the source read-only)."""
    return _Copy(src, src_upper, dst, dst_upper, settings, progress).run()


class _Copy:
    def __init__(
        self, src: Store, src_upper: UpperLayers, dst: Store, dst_upper: UpperLayers,
        settings: Settings, progress: Progress | None,
    ) -> None:  # fmt: skip
        self.src, self.src_upper, self.dst, self.dst_upper = src, src_upper, dst, dst_upper
        self.settings = settings
        self.progress = progress or (lambda what, n: None)
        self.messages, self.atoms = _SeqMap(), _SeqMap()

    def run(self) -> MigrationReport:
        self._check()
        tenants = self._tenants()
        model = self.src.index.embedding_model()
        if model is not None:
            self.dst.index.reset_vectors(model)
        self._messages()
        self._atoms()
        self._state()
        self._upper(tenants)
        report = MigrationReport(
            dg.digests(self.src, self.src_upper, tenants), dg.digests(self.dst, self.dst_upper, tenants)
        )
        if not report.ok:
            log.error("the copy differs from its source: %s", "; ".join(report.lines()))
        return report

    def _check(self) -> None:
        if self.dst.messages.count(None) or self.dst.atoms.count(None) or self.dst_upper.scenes.tenants():
            raise InputError("the target already holds a memory: migrate into an empty one")
        busy = [str(t.tenant) for t in self.src.pipeline.tenants() if t.l2_snapshot or t.l3_running]
        if busy:
            raise InputError(
                f"an L2/L3 run of {busy[0]} was interrupted in the source: open it for writing once "
                "(e.g. `memstrata reindex`) to restore it, then migrate"
            )

    def _tenants(self) -> list[Tenant]:
        found = [s.tenant for s in self.src.pipeline.sessions()] + [
            t.tenant for t in self.src.pipeline.tenants()
        ]
        found += self.src_upper.scenes.tenants()
        return sorted(set(found), key=lambda t: (t.user_id, t.agent_id))

    def _messages(self) -> None:
        previous: dict[tuple[Tenant, str], Message] = {}
        done = 0
        for page in dg.pages_of_messages(self.src):
            items = []
            for m in page:
                key = (m.tenant, m.session_key)
                with_previous = self.settings.search.context_previous
                items.append(
                    (replace(m, seq=0), message_body(m, previous.get(key), with_previous=with_previous))
                )
                previous[key] = m
            stored = self.dst.messages.append(items)
            if len(stored) != len(page):
                raise InputError(f"the target refused {len(page) - len(stored)} messages of the source")
            for old, new in zip(page, stored, strict=True):
                self.messages.add(old.seq, new.seq)
            self._vectors(Layer.L0, page, stored)
            done += len(page)
            self.progress("L0 messages", done)

    def _atoms(self) -> None:
        done = 0
        for page in dg.pages_of_atoms(self.src):
            stored: list[Atom] = []
            start = 0
            for i in range(1, len(page) + 1):  # one commit per run of one tenant, in seq order
                if i == len(page) or page[i].tenant != page[start].tenant:
                    run = page[start:i]
                    got = self.dst.atoms.commit(
                        run[0].tenant, [(replace(a, seq=0), atom_body(a)) for a in run], {}, None
                    )
                    if len(got) != len(run):
                        raise InputError(f"the target refused {len(run) - len(got)} atoms of the source")
                    stored += got
                    start = i
            for old, new in zip(page, stored, strict=True):
                self.atoms.add(old.seq, new.seq)
            self._vectors(Layer.L1, page, stored)
            done += len(page)
            self.progress("L1 atoms", done)

    def _vectors(self, layer: Layer, old: Sequence[Message | Atom], new: Sequence[Message | Atom]) -> None:
        if self.src.index.embedding_model() is None:
            return
        for tenant in dict.fromkeys(r.tenant for r in old):
            pairs = [(o.seq, n.seq) for o, n in zip(old, new, strict=True) if o.tenant == tenant]
            found = self.src.index.get_vectors(tenant, layer, [o for o, _ in pairs])
            kept = [(n, found[o]) for o, n in pairs if o in found]
            if kept:
                self.dst.index.put_vectors(
                    tenant, layer, [n for n, _ in kept], np.vstack([v for _, v in kept])
                )

    def _state(self) -> None:
        for s in self.src.pipeline.sessions():
            last = dg.last_message(self.src, s.tenant, s.session_key, s.cursor)
            self.dst.pipeline.save_session(s)
            if last is not None:
                self.dst.atoms.commit(s.tenant, [], {}, (s.session_key, _map(self.messages, last.seq)))
        for t in self.src.pipeline.tenants():
            last_atom = dg.last_atom(self.src, t.tenant, t.l2_cursor)
            cursor = _map(self.atoms, last_atom.seq) if last_atom is not None else 0
            self.dst.pipeline.save_tenant(replace(t, l2_cursor=cursor, l2_snapshot=None, l3_snapshot=None))
        self.dst.pipeline.save_sweep(self.src.pipeline.sweep())

    def _upper(self, tenants: list[Tenant]) -> None:
        for t in tenants:
            self.dst.members.replace(t, self.src.members.get(t))
            source, target = self.src_upper.scenes.folder(t), self.dst_upper.scenes.folder(t)
            for name in source.names():
                text = source.read(name)
                if text is not None:
                    target.write(name, text)
            if entries := self.src_upper.scenes.index(t):
                self.dst_upper.scenes.save_index(t, entries)
            found = self.src_upper.persona.read(t)
            if found is not None:
                self.dst_upper.persona.write(t, found[0])
        self.progress("L2/L3 tenants", len(tenants))


def _map(seqs: _SeqMap, old: int) -> int:
    i = bisect.bisect_right(seqs.old, old) - 1
    return seqs.new[i] if i >= 0 else 0
