"""One L3 run of a tenant: (re)write ``persona.md`` from the scenes and the top persona atoms.

First mode when there is no persona body yet, incremental otherwise (the writer gets the current
body and the scenes changed since the last persona). The body is escaped and the scene navigation
appended. Backups and state belong to the caller, which restores ``persona.md`` when this raises.
"""

from __future__ import annotations

from asyncio import to_thread
from dataclasses import dataclass

from memstrata.errors import EngineError
from memstrata.layers.l2.scene_file import format_time
from memstrata.layers.l3 import persona_doc
from memstrata.models import USER_NAME, Atom, AtomFilter, AtomType, Tenant, TenantState
from memstrata.ports import Clock, PersonaRequest, Store, UpperLayers

TOP_ATOMS = 80  # persona and instruction atoms shown to the writer
TOP_EVENTS = 30  # episodic atoms shown to the writer
_PAGE = 2000


@dataclass(frozen=True, slots=True)
class L3Report:
    """What an L3 run did: first or incremental, how many changed scenes, the file's size."""

    first: bool
    changed_scenes: int
    chars: int


class L3Runner:
    """Runs L3 for one tenant at a time (the caller holds the tenant's lock and the backup)."""

    def __init__(self, store: Store, upper: UpperLayers, clock: Clock) -> None:
        self._store = store
        self._upper = upper
        self._clock = clock

    async def run(self, tenant: Tenant, state: TenantState) -> L3Report:
        """Write the persona. Raises ``EngineError`` (and what the stores raise) on failure."""
        request = await to_thread(self._prepare, tenant, state)
        body = await self._upper.persona_writer.write(request)
        if not body.strip():
            raise EngineError("the persona writer returned an empty persona", tenant=str(tenant))
        entries = await to_thread(self._upper.scenes.index, tenant)
        text = persona_doc.compose(body, entries)
        await to_thread(self._upper.persona.write, tenant, text)
        return L3Report(request.first, len(request.changed), len(text))

    def _prepare(self, tenant: Tenant, state: TenantState) -> PersonaRequest:
        """The writer's request; ``persona.md`` is left holding the body alone for the writer."""
        found = self._upper.persona.read(tenant)
        current = persona_doc.strip_navigation(found[0]) if found else ""
        if state.l3_fresh:  # memories were removed: the old body may hold them; start over
            current = ""
        first = not current.strip()
        folder = self._upper.persona.folder(tenant)
        # The writer works on the body alone; the navigation is appended afresh afterwards.
        self._upper.persona.write(tenant, current + "\n" if current else "")
        scenes = sorted(self._upper.scenes.load(tenant), key=lambda s: (-s.heat, s.name))
        since = format_time(state.last_l3) if state.last_l3 is not None and not first else ""
        changed = tuple(s.name for s in scenes if format_time(s.updated) >= since)
        request_now = self._clock.now_ms()
        return PersonaRequest(
            tenant=tenant,
            folder=folder,
            current=current,
            first=first,
            scenes=tuple(scenes),
            changed=changed,
            atoms=tuple(self._top(tenant, (AtomType.INSTRUCTION, AtomType.PERSONA), TOP_ATOMS, request_now)),
            reasons=state.l3_reasons,
            now=request_now,
            events=tuple(self._top(tenant, (AtomType.EPISODIC,), TOP_EVENTS, request_now)),
        )

    def _top(self, tenant: Tenant, kinds: tuple[AtomType, ...], limit: int, now: int) -> list[Atom]:
        """Current atoms of ``kinds`` (not expired): strict instructions first, then by priority,
        newer first; the best atom carrying a name the user gave is kept past ``limit``."""
        found: list[Atom] = []
        for kind in kinds:
            after = 0
            flt = AtomFilter(type=kind, at=now)
            while page := self._store.atoms.list(tenant, flt, limit=_PAGE, after_seq=after):
                found += page
                after = page[-1].seq
        found.sort(key=lambda a: (a.priority != -1, -a.priority, -a.seq))
        top = found[:limit]
        # The name a nameless user gave (``USER_NAME``, set at extraction) is who the whole persona
        # is about: the best atom carrying it comes along even when it ranks below the cut.
        if not any(USER_NAME in a.metadata for a in top):
            top += [a for a in found[limit:] if USER_NAME in a.metadata][:1]
        return top
