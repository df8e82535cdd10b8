"""Search (``/ui/t/{user_id}/search``) and the recall preview (``/ui/t/{user_id}/recall``): GET
forms, so a result is a bookmarkable URL."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from memstrata.gateway.console import record_views
from memstrata.gateway.console.web import (
    PageTenant,
    Viewing,
    memory,
    page,
)

router = APIRouter()
LAYER_CHOICES = {"both": ("L1", "L0"), "L1": ("L1",), "L0": ("L0",)}


@router.get("/t/{user_id}/search")
async def search(
    request: Request, view: Viewing, t: PageTenant, q: str = "", layers: str = "both"
) -> Response:
    chosen = LAYER_CHOICES.get(layers, LAYER_CHOICES["both"])
    found = await record_views.explained_search(memory(request), t, q, chosen) if q.strip() else None
    return page(request, view, "search.html", t=t, q=q, layers=layers, found=found)


@router.get("/t/{user_id}/recall")
async def recall(request: Request, view: Viewing, t: PageTenant, q: str = "") -> Response:
    """Exactly what ``before_prompt`` would hand the agent for this prompt, with sizes. A preview
    warms scenes like a real recall would (the same facade call)."""
    found = await record_views.recall_view(memory(request), t, q) if q.strip() else None
    return page(request, view, "recall.html", t=t, q=q, r=found)
