"""A tenant's overview (``/ui/t/{user_id}``) and scenes (``/ui/t/{user_id}/scenes/{name}``), and
the edits of its persona and scenes. The agent is the ``agent`` query parameter (absent: the
default agent)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from memstrata.gateway.console import views
from memstrata.gateway.console.urls import tenant_url
from memstrata.gateway.console.web import (
    Viewer,
    field,
    form,
    kept,
    memory,
    page,
    redirect,
    tenant,
    viewer,
)
from memstrata.gateway.context import who
from memstrata.models import Tenant

router = APIRouter()
Viewing = Annotated[Viewer, Depends(viewer)]


async def seen(request: Request, view: Viewer, user_id: str, agent: str | None) -> Tenant:
    """The tenant of a page: one this viewer may reach (``web.tenant``) and this memory holds."""
    t = tenant(view, user_id, agent)
    await views.known(memory(request), t)
    return t


@router.get("/t/{user_id}")
async def overview(request: Request, view: Viewing, user_id: str, agent: str | None = None) -> Response:
    t = await seen(request, view, user_id, agent)
    found = await views.overview(memory(request), t, kept(request))
    return page(request, view, "overview.html", t=t, o=found)


@router.post("/t/{user_id}/persona")
async def edit_persona(request: Request, view: Viewing, user_id: str, agent: str | None = None) -> Response:
    """Replace the persona body (the facade regenerates its scene navigation)."""
    t = await seen(request, view, user_id, agent)
    fields = await form(request, view)
    await memory(request).write_persona(field(fields, "body"), **who(t))
    return redirect(request, view, tenant_url(t))


@router.get("/t/{user_id}/scenes/{name}")
async def scene(
    request: Request, view: Viewing, user_id: str, name: str, agent: str | None = None
) -> Response:
    t = await seen(request, view, user_id, agent)
    found = await views.scene_view(memory(request), t, name, kept(request))
    return page(request, view, "scene.html", t=t, s=found)


@router.post("/t/{user_id}/scenes/{name}")
async def edit_scene(
    request: Request, view: Viewing, user_id: str, name: str, agent: str | None = None
) -> Response:
    """Replace a scene's body and summary (it must exist: this form never creates one)."""
    t = await seen(request, view, user_id, agent)
    fields = await form(request, view)
    summary = field(fields, "summary", required=False) or None
    written = await memory(request).write_scene(
        name, field(fields, "content"), summary=summary, create=False, **who(t)
    )
    return redirect(request, view, tenant_url(t, f"/scenes/{written.name}"))
