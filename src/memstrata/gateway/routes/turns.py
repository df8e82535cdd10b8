"""Capture, recall and the host turn lifecycle."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from memstrata.gateway.context import Mem, reply, tenant_of, who
from memstrata.gateway.records import AtomOut, CaptureOut, DoneOut, RecallOut, TurnOut
from memstrata.gateway.requests import (
    BeforePromptIn,
    CaptureIn,
    OperationBody,
    RecallIn,
    RememberIn,
    SessionEndIn,
    TurnCommittedIn,
    parsed,
)

router = APIRouter(prefix="/v1", tags=["turns"])


@router.post("/capture", response_model=CaptureOut)
async def capture(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(CaptureIn))], request: Request
) -> Response:
    """Store up to 100 messages of one session (L0); answers once they are stored. Extraction
    runs in the background pipeline."""
    return reply(CaptureOut, await mem.capture(**body.arguments(), **who(tenant_of(request, body))))


@router.post("/remember", response_model=AtomOut)
async def remember(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(RememberIn))], request: Request
) -> Response:
    """Store a note as a memory atom now (its source message too): searchable on return."""
    return reply(AtomOut, await mem.remember(**body.arguments(), **who(tenant_of(request, body))))


@router.post("/recall", response_model=RecallOut)
async def recall(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(RecallIn))], request: Request
) -> Response:
    """The context to inject before a prompt: ``system_context`` and ``prepend_context``."""
    return reply(RecallOut, await mem.recall(**body.arguments(), **who(tenant_of(request, body))))


@router.post("/turns/before-prompt", response_model=RecallOut)
async def before_prompt(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(BeforePromptIn))], request: Request
) -> Response:
    """The host is about to call its model: recall for the prompt and remember it, clean, for
    the session's ``turns/committed``."""
    result = await mem.before_prompt(**body.arguments(), **who(tenant_of(request, body)))
    return reply(RecallOut, result)


@router.post("/turns/committed", response_model=TurnOut)
async def turn_committed(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(TurnCommittedIn))], request: Request
) -> Response:
    """The turn is over: store what is new in the transcript (the whole of it may be sent)."""
    return reply(TurnOut, await mem.turn_committed(**body.arguments(), **who(tenant_of(request, body))))


@router.post("/sessions/end", response_model=DoneOut)
async def end_session(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(SessionEndIn))], request: Request
) -> Response:
    """The session is over: extract what is pending for it now."""
    await mem.end_session(**body.arguments(), **who(tenant_of(request, body)))
    return reply(DoneOut, DoneOut())
