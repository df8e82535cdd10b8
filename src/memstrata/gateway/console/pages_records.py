"""A tenant's atoms (``/ui/t/{user_id}/atoms``, ``.../atoms/{id}``) with their curation, and its
messages (``/ui/t/{user_id}/messages``, ``.../messages/{id}``)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from fastapi import APIRouter, Request
from fastapi.responses import Response

from memstrata.errors import InputError
from memstrata.gateway.console import record_views
from memstrata.gateway.console.urls import tenant_url
from memstrata.gateway.console.web import (
    PageTenant,
    Viewing,
    field,
    form,
    kept,
    memory,
    page,
    recent_status,
    redirect,
)
from memstrata.gateway.context import who

router = APIRouter()


def day_ms(text: str | None, name: str, *, end: bool = False) -> int | None:
    """A ``YYYY-MM-DD`` filter as epoch ms (``end``: the day after, so 'until' includes it)."""
    if not text:
        return None
    try:
        d = date.fromisoformat(text)
    except ValueError:
        raise InputError(f"{name} must be a date like 2026-03-02, got {text!r}", item=name) from None
    ms = int(datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp() * 1000)
    return ms + 86_400_000 if end else ms


@router.get("/t/{user_id}/atoms")
async def atoms(
    request: Request,
    view: Viewing,
    t: PageTenant,
    type: str | None = None,
    scene: str | None = None,
    since: str | None = None,
    until: str | None = None,
    pinned: bool = False,
    expiring: bool = False,
    superseded: bool = False,
    after: int = 0,
) -> Response:
    q = record_views.AtomQuery(
        type or None, scene or None, day_ms(since, "since"), day_ms(until, "until", end=True),
        pinned, expiring, superseded, after,
    )  # fmt: skip
    found = await record_views.atom_page(memory(request), t, q)
    filters = {"type": type, "scene": scene, "since": since, "until": until}
    flags = {"pinned": pinned, "expiring": expiring, "superseded": superseded}
    return page(request, view, "atoms.html", t=t, p=found, filters=filters, flags=flags)


@router.get("/t/{user_id}/atoms/{atom_id}")
async def atom(request: Request, view: Viewing, t: PageTenant, atom_id: str) -> Response:
    found = await record_views.atom_view(memory(request), t, atom_id, kept(request))
    return page(request, view, "atom.html", t=t, a=found)


@router.post("/t/{user_id}/atoms/{atom_id}/edit")
async def edit_atom(request: Request, view: Viewing, t: PageTenant, atom_id: str) -> Response:
    """A corrected atom: a new version supersedes it (the old one stays readable)."""
    fields = await form(request, view)
    new = await memory(request).update_atom(atom_id, content=field(fields, "content"), **who(t))
    return redirect(request, view, tenant_url(t, f"/atoms/{new.id}"))


@router.post("/t/{user_id}/atoms/{atom_id}/pin")
async def pin_atom(request: Request, view: Viewing, t: PageTenant, atom_id: str) -> Response:
    fields = await form(request, view)
    await memory(request).pin_atom(atom_id, fields.get("pinned") == "1", **who(t))
    return redirect(request, view, tenant_url(t, f"/atoms/{atom_id}"))


@router.post("/t/{user_id}/atoms/{atom_id}/ttl")
async def atom_ttl(request: Request, view: Viewing, t: PageTenant, atom_id: str) -> Response:
    """A time to live: an expiry date (the end of that day), or none to clear it."""
    fields = await form(request, view)
    expires = day_ms(field(fields, "expires", required=False), "expires", end=True)
    await memory(request).set_atom_ttl(atom_id, expires_at=expires, **who(t))
    return redirect(request, view, tenant_url(t, f"/atoms/{atom_id}"))


@router.post("/t/{user_id}/atoms/{atom_id}/delete")
async def delete_atom(request: Request, view: Viewing, t: PageTenant, atom_id: str) -> Response:
    """Delete the atom and its older versions."""
    await form(request, view)
    await memory(request).delete_atoms([atom_id], **who(t))
    return redirect(request, view, tenant_url(t, "/atoms"))


@router.get("/t/{user_id}/messages")
async def messages(
    request: Request,
    view: Viewing,
    t: PageTenant,
    session: str | None = None,
    since: str | None = None,
    until: str | None = None,
    after: int = 0,
) -> Response:
    found = await record_views.message_page(
        memory(request),
        t,
        await recent_status(request),
        session or None,
        day_ms(since, "since"),
        day_ms(until, "until", end=True),
        after,
    )
    filters = {"session": session, "since": since, "until": until}
    return page(request, view, "messages.html", t=t, p=found, filters=filters)


@router.get("/t/{user_id}/messages/{message_id:path}")  # ids may hold "/" (LoCoMo's do)
async def message(request: Request, view: Viewing, t: PageTenant, message_id: str) -> Response:
    found = await record_views.message_view(memory(request), t, message_id, kept(request))
    return page(request, view, "message.html", t=t, m=found)
