"""Errors on the wire: one stable code per kind of failure, in the shape each API family reads.

    native (/v1/...)   {"error": {"code", "message", "request_id", "field"?, ...}}
    TDAM v1            {"error": message, "code": code}          (TDAM's GatewayErrorResponse)
    TDAM v2/v3         {"code": <HTTP status>, "message", "request_id"}   (TDAM's envelope)

Bad input is always a 4xx; a 5xx means the server (or a store it depends on) failed, and its
message never carries internals (they go to the log with the request id).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from memstrata import errors as e

log = logging.getLogger("memstrata.gateway")

TDAM_V1_PATHS = frozenset(
    {"/health", "/recall", "/capture", "/search/memories", "/search/conversations", "/session/end", "/seed"}
)


@dataclass(frozen=True, slots=True)
class Problem:
    status: int
    code: str
    message: str
    where: str | None = None  # the field at fault
    extra: dict[str, Any] = field(default_factory=dict)


def problem_of(exc: BaseException) -> Problem:
    """The wire problem for an exception raised while serving a request (``errors.WIRE``)."""
    wire = e.wire_of(exc)
    if wire is None or not isinstance(exc, e.MemstrataError):
        log.error("internal error", exc_info=exc)
        return Problem(500, "internal_error", "internal error (the server log has the details)")
    if wire.status >= 500:
        log.error("request failed: %s", exc)
    return Problem(wire.status, wire.code, exc.message, wire.field_of(exc), wire.details_of(exc))


def style(path: str) -> str:
    """Which error shape a path's clients read: ``native``, ``tdam_v1`` or ``tdam_v3``."""
    if path.startswith(("/v2/", "/v3/")):
        return "tdam_v3"
    if path in TDAM_V1_PATHS:
        return "tdam_v1"
    return "native"


def render(problem: Problem, path: str, request_id: str) -> tuple[int, dict[str, Any]]:
    """The HTTP status and JSON body of an error for ``path``. TDAM's routes answer invalid
    parameters with 400 (TDAM keeps 422 for business rules), the native API with 422."""
    kind = style(path)
    status = 400 if kind != "native" and problem.status == 422 else problem.status
    if kind == "tdam_v3":
        return status, {"code": status, "message": problem.message, "request_id": request_id}
    if kind == "tdam_v1":
        return status, {"error": problem.message, "code": problem.code}
    body: dict[str, Any] = {"code": problem.code, "message": problem.message, "request_id": request_id}
    if problem.where is not None:
        body["field"] = problem.where
    body.update(problem.extra)
    return status, {"error": body}


def field_of(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as a field path: ``("body", "messages", 0, "role")`` ->
    ``messages[0].role``."""
    parts = [p for p in loc if p not in ("body", "query", "path", "header")]
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "body"
