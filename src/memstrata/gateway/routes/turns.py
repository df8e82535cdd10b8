"""Capture, recall and the host turn lifecycle."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from memstrata.gateway.context import Mem, reply, tenant_of, who
from memstrata.gateway.records import AtomOut, CaptureOut, DoneOut, RecallOut, TurnOut
from memstrata.gateway.requests import (
    BeforePromptIn,
    CaptureIn,
    RecallIn,
    RememberIn,
    SessionEndIn,
    TurnCommittedIn,
)

router = APIRouter(prefix="/v1", tags=["turns"])


@router.post("/capture", response_model=CaptureOut)
async def capture(mem: Mem, body: CaptureIn, request: Request) -> Response:
    """Store up to 100 messages of one session (L0); answers once they are stored. Extraction
    runs in the background pipeline."""
    messages = [m.model_dump(exclude_none=True) for m in body.messages]
    result = await mem.capture(
        messages, session_key=body.session_key, session_id=body.session_id, **who(tenant_of(request, body))
    )
    return reply(CaptureOut, result)


@router.post("/remember", response_model=AtomOut)
async def remember(mem: Mem, body: RememberIn, request: Request) -> Response:
    """Store a note as a memory atom now (its source message too): searchable on return."""
    atom = await mem.remember(
        body.text, type=body.type, metadata=body.metadata, **who(tenant_of(request, body))
    )
    return reply(AtomOut, atom)


@router.post("/recall", response_model=RecallOut)
async def recall(mem: Mem, body: RecallIn, request: Request) -> Response:
    """The context to inject before a prompt: ``system_context`` and ``prepend_context``."""
    result = await mem.recall(body.query, session_key=body.session_key, **who(tenant_of(request, body)))
    return reply(RecallOut, result)


@router.post("/turns/before-prompt", response_model=RecallOut)
async def before_prompt(mem: Mem, body: BeforePromptIn, request: Request) -> Response:
    """The host is about to call its model: recall for the prompt and remember it, clean, for
    the session's ``turns/committed``."""
    result = await mem.before_prompt(
        body.prompt,
        session_key=body.session_key,
        transcript_length=body.transcript_length,
        **who(tenant_of(request, body)),
    )
    return reply(RecallOut, result)


@router.post("/turns/committed", response_model=TurnOut)
async def turn_committed(mem: Mem, body: TurnCommittedIn, request: Request) -> Response:
    """The turn is over: store what is new in the transcript (the whole of it may be sent)."""
    messages = [m.model_dump(exclude_none=True) for m in body.messages]
    result = await mem.turn_committed(
        messages, session_key=body.session_key, session_id=body.session_id, **who(tenant_of(request, body))
    )
    return reply(TurnOut, result)


@router.post("/sessions/end", response_model=DoneOut)
async def end_session(mem: Mem, body: SessionEndIn, request: Request) -> Response:
    """The session is over: extract what is pending for it now."""
    await mem.end_session(body.session_key, **who(tenant_of(request, body)))
    return reply(DoneOut, DoneOut())
