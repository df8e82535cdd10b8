"""Capture, recall and the host turn lifecycle: each route built from its declaration
(``routes.declared``)."""

from __future__ import annotations

from fastapi import APIRouter

from memstrata import operations as ops
from memstrata.gateway import requests as body
from memstrata.gateway import responses as out
from memstrata.gateway.routes.declared import body_route

router = APIRouter(prefix="/v1", tags=["turns"])

body_route(
    router,
    ops.Capture,
    body.CaptureIn,
    out.CaptureOut,
    "Store up to 100 messages of one session (L0); answers once they are stored. Extraction runs in "
    "the background pipeline.",
)
body_route(
    router,
    ops.Remember,
    body.RememberIn,
    out.AtomOut,
    "Store a note as a memory atom now (its source message too): searchable on return.",
)
body_route(
    router,
    ops.Recall,
    body.RecallIn,
    out.RecallOut,
    "The context to inject before a prompt: ``system_context`` and ``prepend_context``.",
)
body_route(
    router,
    ops.BeforePrompt,
    body.BeforePromptIn,
    out.RecallOut,
    "The host is about to call its model: recall for the prompt and remember it, clean, for the "
    "session's ``turns/committed``.",
)
body_route(
    router,
    ops.TurnCommitted,
    body.TurnCommittedIn,
    out.TurnOut,
    "The turn is over: store what is new in the transcript (the whole of it may be sent).",
)
body_route(
    router,
    ops.EndSession,
    body.SessionEndIn,
    out.DoneOut,
    "The session is over: extract what is pending for it now.",
)
