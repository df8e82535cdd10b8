"""A tenant's overview (``/ui/t/{user_id}``) and scenes (``/ui/t/{user_id}/scenes/{name}``), and
the edits of its persona and scenes (the tenant of each: ``web.PageTenant``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from memstrata.gateway.console import views
from memstrata.gateway.console.urls import tenant_url
from memstrata.gateway.console.web import (
    PageTenant,
    Viewing,
    field,
    form,
    kept,
    memory,
    page,
    redirect,
)
from memstrata.gateway.context import who

router = APIRouter()


@router.get("/t/{user_id}")
async def overview(request: Request, view: Viewing, t: PageTenant, backup: str | None = None) -> Response:
    """``backup``: a persona backup to compare with the persona (a diff below it)."""
    found = await views.overview(memory(request), t, kept(request), backup or None)
    return page(request, view, "overview.html", t=t, o=found)


@router.post("/t/{user_id}/persona")
async def edit_persona(request: Request, view: Viewing, t: PageTenant) -> Response:
    """Replace the persona body (the facade regenerates its scene navigation)."""
    fields = await form(request, view)
    await memory(request).write_persona(field(fields, "body"), **who(t))
    return redirect(request, view, tenant_url(t))


@router.get("/t/{user_id}/scenes/{name}")
async def scene(
    request: Request, view: Viewing, t: PageTenant, name: str, backup: str | None = None
) -> Response:
    """``backup``: one of the scene's backups to compare with the scene (a diff below the list)."""
    found = await views.scene_view(memory(request), t, name, kept(request), backup or None)
    return page(request, view, "scene.html", t=t, s=found)


@router.post("/t/{user_id}/scenes/{name}")
async def edit_scene(request: Request, view: Viewing, t: PageTenant, name: str) -> Response:
    """Replace a scene's body and summary (it must exist: this form never creates one)."""
    fields = await form(request, view)
    summary = field(fields, "summary", required=False) or None
    written = await memory(request).write_scene(
        name, field(fields, "content"), summary=summary, create=False, **who(t)
    )
    return redirect(request, view, tenant_url(t, f"/scenes/{written.name}"))
