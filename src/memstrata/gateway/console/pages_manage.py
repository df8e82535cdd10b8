"""Whole-tenant actions: run the pipeline now, import a conversation file, export a tenant,
forget a tenant (typed confirmation). Each is one facade call, under the facade's own locks."""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.datastructures import UploadFile

from memstrata.errors import AccessError, InputError
from memstrata.gateway.access import check
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
    sessions,
)
from memstrata.gateway.context import who
from memstrata.interchange import parse_import

router = APIRouter()
MAX_IMPORT_BYTES = 32 * 1024 * 1024


@router.post("/t/{user_id}/run")
async def run_now(request: Request, view: Viewing, t: PageTenant) -> Response:
    """Run the pipeline now: what is pending of every session, then L2 and L3 (the facade runs
    every tenant's due work together; the others' is theirs either way)."""
    await form(request, view)
    mem = memory(request)
    await mem.request_persona("asked from the console", **who(t))
    await mem.run_all()
    return redirect(request, view, tenant_url(t))


@router.get("/import")
async def import_form(request: Request, view: Viewing) -> Response:
    return page(request, view, "import.html")


@router.post("/import")
async def import_file(request: Request, view: Viewing) -> Response:
    """Import a conversation file (seed or LoCoMo JSON, detected) and run it to L3. A scoped key
    may import only into its own tenants: a file naming another is refused whole."""
    data = await request.form()
    if not sessions(request).csrf_ok(view.session, str(data.get("csrf", ""))):
        raise AccessError("this form has no valid CSRF token: reload the page and send it again")
    upload = data.get("file")
    if not isinstance(upload, UploadFile):
        raise InputError("choose a conversation file to import", item="file")
    raw = await upload.read(MAX_IMPORT_BYTES + 1)
    if len(raw) > MAX_IMPORT_BYTES:
        raise InputError(f"the file is over {MAX_IMPORT_BYTES:,} bytes", item="file")
    try:
        parsed = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"the file is not UTF-8 JSON: {exc}", item="file") from exc
    found = parse_import(parsed)
    for s in found:
        check(view.principal, s.tenant)
    report = await memory(request).import_sessions(found)
    kept(request).clear()
    tenants = sorted({s.tenant for s in found}, key=lambda t: (t.user_id, t.agent_id))
    return page(request, view, "import.html", report=report, tenants=tenants, filename=upload.filename)


@router.get("/t/{user_id}/export")
async def export(request: Request, view: Viewing, t: PageTenant) -> Response:
    """Every layer of the tenant as a zip of the JSONL export (``memstrata import`` reads it)."""
    with tempfile.TemporaryDirectory(prefix="memstrata-console-") as tmp:
        out = Path(tmp) / "export"
        await memory(request).export(out, format="jsonl", **who(t))
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(out.rglob("*")):
                if path.is_file():
                    archive.write(path, path.relative_to(out).as_posix())
    headers = {"content-disposition": attachment(f"memstrata-{t.user_id}-{t.agent_id}.zip")}
    return Response(buffer.getvalue(), media_type="application/zip", headers=headers)


def attachment(name: str) -> str:
    """A ``Content-Disposition`` naming ``name`` per RFC 6266: ``filename*`` in UTF-8 (any user
    id, Chinese included; a header must be Latin-1, so ``用户`` in ``filename`` had been a 500),
    and an ASCII ``filename`` for clients that read only that."""
    fallback = "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name)
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


@router.post("/t/{user_id}/forget")
async def forget(request: Request, view: Viewing, t: PageTenant) -> Response:
    """Erase the tenant for good; the form must repeat the user id, typed."""
    fields = await form(request, view)
    if field(fields, "confirm") != t.user_id:
        raise InputError(f"type the user id ({t.user_id}) to confirm", item="confirm")
    report = await memory(request).forget(user_id=t.user_id, agent_id=t.agent_id)
    kept(request).clear()
    return page(request, view, "forgotten.html", gone=t, report=report)
