"""TDAM L1: ``/v3/atomic/{update,query,search,delete,count}`` (and ``/v2`` but count).

From ``MemoryCore/src/gateway/v2-router.ts`` and ``generated/schemas.ts``. ``background`` is the
atom's scene name; ``version`` is a number in lists and ``"v<n>"`` in the update answer, as TDAM."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import Request
from pydantic import Field, StringConstraints

from memstrata.errors import InputError
from memstrata.gateway.context import Mem, who
from memstrata.gateway.tdam.common import TdamBody, iso, millis, ok, tenant

Text = Annotated[str, StringConstraints(max_length=512)]
Time = Annotated[str, StringConstraints(max_length=64)]
Kind = Annotated[str, StringConstraints(max_length=64)]
_TYPES = {"persona", "episodic", "instruction"}


class UpdateIn(TdamBody):
    id: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    content: Annotated[str, StringConstraints(min_length=1, max_length=8192)]
    background: Annotated[str, StringConstraints(max_length=512)] | None = None


class QueryIn(TdamBody):
    limit: Annotated[int, Field(ge=1, le=100)] = 20
    offset: Annotated[int, Field(ge=0, le=100_000)] = 0
    type: Kind | None = None
    time_start: Time | None = None
    time_end: Time | None = None


class SearchIn(TdamBody):
    query: Annotated[str, StringConstraints(min_length=1, max_length=2048)]
    limit: Annotated[int, Field(ge=1, le=100)] = 5
    type: Kind | None = None
    time_start: Time | None = None
    time_end: Time | None = None


class DeleteIn(TdamBody):
    ids: Annotated[list[Text], Field(min_length=1, max_length=5000)]


class CountIn(TdamBody):
    type: Kind | None = None
    time_start: Time | None = None
    time_end: Time | None = None


def _type(value: str | None) -> str | None:
    """TDAM's ``type`` filter; a type memstrata does not have matches nothing (None: no filter)."""
    if value is None or value == "":
        return None
    if value not in _TYPES:
        raise InputError(f"unknown atom type {value!r}: use persona, episodic or instruction", item="type")
    return value


def detail(a: Any) -> dict[str, Any]:
    return {
        "id": a.id,
        "type": str(a.type),
        "content": a.content,
        "background": a.scene_name or None,
        "version": a.version,
        "user_id": a.tenant.user_id,
        "agent_id": a.tenant.agent_id,
        "created_at": iso(a.created_at),
        "updated_at": iso(a.updated_at),
    }


async def update(mem: Mem, body: UpdateIn, request: Request) -> dict[str, Any]:
    """Correct a note. memstrata writes a new version (a new id) that supersedes it; an id that
    was already superseded edits the current version, as TDAM's ids name the note."""
    a = await mem.update_atom(
        body.id, content=body.content, scene_name=body.background, follow=True, **who(tenant(request, body))
    )
    return ok({"id": a.id, "version": f"v{a.version}", "updated_at": iso(a.updated_at)})


async def query(mem: Mem, request: Request, body: QueryIn | None = None) -> dict[str, Any]:
    body = body or QueryIn()
    t = tenant(request, body)
    kind, since, until = (
        _type(body.type),
        millis(body.time_start, "time_start"),
        millis(body.time_end, "time_end"),
    )
    found = await mem.atoms(type=kind, since=since, until=until, limit=body.offset + body.limit, **who(t))
    total = await mem.counts(type=kind, since=since, until=until, **who(t))
    return ok({"items": [detail(a) for a in found[body.offset :]], "total": total.atoms})


async def search(mem: Mem, body: SearchIn, request: Request) -> dict[str, Any]:
    t = tenant(request, body)
    r = await mem.search(
        body.query,
        limit=body.limit,
        layers=("L1",),
        type=_type(body.type),
        since=millis(body.time_start, "time_start"),
        until=millis(body.time_end, "time_end"),
        **who(t),
    )
    atoms = await asyncio.gather(*(mem.get_atom(h.id, **who(t)) for h in r.hits))
    return ok({"items": [{**detail(a), "score": h.score} for a, h in zip(atoms, r.hits, strict=True)]})


async def delete(mem: Mem, body: DeleteIn, request: Request) -> dict[str, Any]:
    wanted = list(dict.fromkeys(i.strip() for i in body.ids if i.strip()))
    if not wanted:
        raise InputError("ids must contain at least one non-empty id", item="ids")
    deleted = set(await mem.delete_atoms(wanted, **who(tenant(request, body))))
    return ok({"deleted_count": sum(1 for i in wanted if i in deleted)})


async def count(mem: Mem, request: Request, body: CountIn | None = None) -> dict[str, Any]:
    body = body or CountIn()
    found = await mem.counts(
        type=_type(body.type),
        since=millis(body.time_start, "time_start"),
        until=millis(body.time_end, "time_end"),
        **who(tenant(request, body)),
    )
    return ok({"total": found.atoms})


ROUTES = {"update": update, "query": query, "search": search, "delete": delete, "count": count}
