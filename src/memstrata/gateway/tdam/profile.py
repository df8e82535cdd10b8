"""TDAM L2 and L3: ``/v3/scenario/{ls,read,write,rm,count}`` and ``/v3/core/{read,write,count}``
(and ``/v2`` but the counts).

From ``MemoryCore/src/gateway/v2-router.ts`` (handlers) and ``v2-schemas.ts`` (``safePath``).
Paths are relative to ``scene_blocks/``; memstrata's scene names are flat and normalised
(``family.md``), so a path with folders is refused (TDAM allows sub-folders)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from pydantic import Field, StringConstraints

from memstrata.errors import InputError, NotFoundError
from memstrata.gateway.context import Mem, who
from memstrata.gateway.tdam.common import TdamBody, ids, iso, ok, tenant
from memstrata.layers.l2.scene_file import render_scene
from memstrata.layers.l3.persona_doc import NAV_MARKER

Path = Annotated[str, StringConstraints(min_length=1, max_length=512)]


class LsIn(TdamBody):
    path_prefix: Annotated[str, StringConstraints(max_length=512)] | None = None


class ReadIn(TdamBody):
    path: Path
    version: Annotated[str, StringConstraints(max_length=64)] | None = None


class WriteIn(TdamBody):
    path: Path
    content: Annotated[str, StringConstraints(max_length=500_000)]
    summary: Annotated[str, StringConstraints(max_length=2000)] | None = None


class RmIn(TdamBody):
    path: Path | None = None
    paths: Annotated[list[Path], Field(min_length=1, max_length=100)] | None = None


class CountIn(TdamBody):
    path_prefix: Annotated[str, StringConstraints(max_length=512)] | None = None


class CoreReadIn(TdamBody):
    version: Annotated[str, StringConstraints(max_length=64)] | None = None


class CoreWriteIn(TdamBody):
    content: Annotated[str, StringConstraints(max_length=500_000)]


async def ls(mem: Mem, request: Request, body: LsIn | None = None) -> dict[str, Any]:
    body = body or LsIn()
    prefix = (body.path_prefix or "").removeprefix("scene_blocks/")
    entries = [
        {
            "path": e.name,
            "summary": e.summary or None,
            "version": 1,
            **ids(request, body),
            "created_at": iso(e.created),
            "updated_at": iso(e.updated),
        }
        for e in await mem.scenes(**who(tenant(request, body)))
        if e.name.startswith(prefix)
    ]
    return ok({"entries": entries, "total": len(entries)})


async def read(mem: Mem, body: ReadIn, request: Request) -> dict[str, Any]:
    """A scene file, META included; a missing one answers ``content: null`` (as TDAM, not 404)."""
    try:
        scene = await mem.read_scene(body.path, **who(tenant(request, body)))
    except NotFoundError:
        return ok({"path": body.path, "content": None, "created_at": None, "updated_at": None})
    return ok(
        {
            "path": body.path,
            "content": render_scene(scene),
            "version": 1,
            **ids(request, body),
            "created_at": iso(scene.created),
            "updated_at": iso(scene.updated),
        }
    )


async def write(mem: Mem, body: WriteIn, request: Request) -> dict[str, Any]:
    """Replace an existing scene (404 when it does not exist: TDAM does not create here)."""
    scene = await mem.write_scene(
        body.path, body.content, summary=body.summary, create=False, **who(tenant(request, body))
    )
    return ok({"path": body.path, "updated_at": iso(scene.updated), "version": 1, **ids(request, body)})


async def rm(mem: Mem, body: RmIn, request: Request) -> dict[str, Any]:
    paths = [*([body.path] if body.path else []), *(body.paths or [])]
    if not paths:
        raise InputError("path is required", item="path")
    for path in paths:
        await mem.delete_scene(path, **who(tenant(request, body)))
    return ok()


async def count(mem: Mem, request: Request, body: CountIn | None = None) -> dict[str, Any]:
    body = body or CountIn()
    found = await mem.counts(scene_prefix=body.path_prefix, **who(tenant(request, body)))
    return ok({"total": found.scenes})


async def core_read(mem: Mem, request: Request, body: CoreReadIn | None = None) -> dict[str, Any]:
    """``persona.md`` as stored (body, then the generated scene navigation); ``content: null``
    before the first persona."""
    body = body or CoreReadIn()
    p = await mem.persona(**who(tenant(request, body)))
    if p is None:
        return ok({"content": None, "created_at": None, "updated_at": None})
    text = f"{p.body}\n\n{NAV_MARKER}\n{p.navigation}\n" if p.navigation else f"{p.body}\n"
    return ok(
        {
            "content": text,
            "version": 1,
            **ids(request, body),
            "created_at": iso(p.updated),
            "updated_at": iso(p.updated),
        }
    )


async def core_write(mem: Mem, body: CoreWriteIn, request: Request) -> dict[str, Any]:
    p = await mem.write_persona(body.content, **who(tenant(request, body)))
    return ok({"updated_at": iso(p.updated), "version": 1, **ids(request, body)})


async def core_count(mem: Mem, request: Request, body: TdamBody | None = None) -> dict[str, Any]:
    body = body or TdamBody()
    return ok({"total": (await mem.counts(**who(tenant(request, body)))).persona})


SCENARIO = {"ls": ls, "read": read, "write": write, "rm": rm, "count": count}
CORE = {"read": core_read, "write": core_write, "count": core_count}
