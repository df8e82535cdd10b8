"""Routes built from the operations' declarations (``memstrata.operations``), as the facade's
methods and the HTTP clients' are: the method and path are the declaration's ``Route``, the body
its request model (``gateway.requests``, built from the same declaration), the answer the
response model of its result (``gateway.records``, built from the record), and the handler
builds the operation and runs it (``operations.perform``). A route with its own rules (a check
of its own, an answer of another shape) is written by hand in its topic module."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel

from memstrata import operations as ops
from memstrata.gateway.context import Mem, reply, tenant_of, who
from memstrata.gateway.requests import OperationBody, parsed


def body_route(
    router: APIRouter,
    spec: type[ops.Operation[Any]],
    body: type[OperationBody],
    out: type[BaseModel],
    doc: str,
) -> None:
    """Serve ``spec`` where it is declared: its arguments from the JSON ``body``, the tenant from
    the body, the headers or the key (``tenant_of``), the result answered as ``out`` (an
    operation without a result answers ``out()``); ``doc`` is what the API docs say of it."""

    build: Callable[..., ops.Operation[Any]] = spec  # the declaration's constructor: its parameters

    async def endpoint(mem: ops.MemoryApi, given: OperationBody, request: Request) -> Response:
        op = build(**given.arguments(), **who(tenant_of(request, given)))
        result = await ops.perform(mem, op)
        return reply(out, out() if result is None else result)

    # FastAPI reads the handler's signature: the memory, the body model, the request.
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("mem", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Mem),
            inspect.Parameter(
                "given",
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                annotation=Annotated[OperationBody, Depends(parsed(body))],
            ),
            inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request),
        ],
        return_annotation=Response,
    )
    endpoint.__name__ = endpoint.__qualname__ = spec.NAME
    endpoint.__doc__ = doc
    route = spec.ROUTE
    if route.in_query or route.path_names or route.key is not None:
        raise TypeError(f"{spec.NAME}: a body route answers its record, from a body alone")
    router.add_api_route(
        route.path.removeprefix(router.prefix), endpoint, methods=[route.method], response_model=out
    )
