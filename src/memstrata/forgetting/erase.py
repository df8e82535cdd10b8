"""Erasing tenants for good: every layer, index and file, then the space given back.

The caller (the facade's ``forget``) holds the pipeline off and each tenant's L2/L3 lock. Per
tenant: the store's rows, index rows, vectors, scene membership, pipeline state and mirror lines
(``Store.erase``); the persona and its backups, then the whole profile folder (``erase`` of the
persona and scene stores). Then once: ``Store.compact`` so the deleted bytes leave the files.
Run again after a crash, it finishes the job.
"""

from __future__ import annotations

from collections.abc import Iterable

from memstrata.models import Erased, ForgetReport, Tenant
from memstrata.ports import Store, UpperLayers


def erase_tenant(store: Store, upper: UpperLayers | None, tenant: Tenant) -> tuple[Erased, int]:
    """Erase one tenant from the store and its profile files; returns the rows and files removed."""
    erased = store.erase(tenant)
    files = 0
    if upper is not None:
        files += upper.persona.erase(tenant)
        files += upper.scenes.erase(tenant)
    return erased, files


def chosen(known: Iterable[Tenant], user_id: str, agent_id: str | None) -> list[Tenant]:
    """The tenants ``forget(user_id, agent_id)`` means: that one, or every agent of the user. A
    named tenant is erased even when nothing is known of it (a re-run finishing a crashed one)."""
    found = [t for t in dict.fromkeys(known) if t.user_id == user_id]
    if agent_id is not None:
        return [Tenant(user_id, agent_id)]
    return sorted(found, key=lambda t: t.agent_id)


def report(tenants: list[Tenant], parts: list[tuple[Erased, int]], notes: list[str]) -> ForgetReport:
    erased = Erased()
    files = 0
    for rows, removed in parts:
        erased += rows
        files += removed
    return ForgetReport(tuple(tenants), erased, files, reclaimed=not notes, notes=tuple(notes))
