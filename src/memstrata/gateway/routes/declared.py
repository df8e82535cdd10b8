"""Routes built from the operations' declarations (``memstrata.operations``), as the facade's
methods and the HTTP clients' are: the method and path are the declaration's ``Route``, the body
or query its request model (``gateway.requests``, built from the same declaration), the answer
the response model of its result (``gateway.records``, built from the record), and the handler
builds the operation and runs it (``operations.perform``). A route with rules of its own (an
admin check, a listing of every tenant, a 404 for a false answer) is written by hand in its
topic module."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import BaseModel

from memstrata import operations as ops
from memstrata.gateway.context import Mem, reply, reply_list, tenant, tenant_of, who
from memstrata.gateway.requests import OperationBody, OperationQuery, parsed, queried

IdQuery = Annotated[str | None, Query(min_length=1, max_length=512)]
_P = inspect.Parameter.POSITIONAL_OR_KEYWORD


def body_route(
    router: APIRouter,
    spec: type[ops.Operation[Any]],
    body: type[OperationBody],
    out: type[BaseModel],
    doc: str,
) -> None:
    """Serve ``spec`` where it is declared: its arguments from the path and the JSON ``body``,
    the tenant from the body, the headers or the key (``tenant_of``), the result answered as
    ``out``; ``doc`` is what the API docs say of it."""
    build: Callable[..., ops.Operation[Any]] = spec  # the declaration's constructor: its parameters

    async def endpoint(mem: ops.MemoryApi, given: OperationBody, request: Request, **path: str) -> Response:
        op = build(**path, **given.arguments(), **who(tenant_of(request, given)))
        return _answer(spec, out, await ops.perform(mem, op))

    given = inspect.Parameter("given", _P, annotation=Annotated[OperationBody, Depends(parsed(body))])
    _serve(router, spec, out, doc, endpoint, [given])


def query_route(
    router: APIRouter,
    spec: type[ops.Operation[Any]],
    out: type[BaseModel],
    doc: str,
    query: type[OperationQuery] | None = None,
) -> None:
    """Serve ``spec`` (a GET or DELETE) where it is declared: its arguments from the path and the
    ``query`` model (else only the tenant, ``user_id`` / ``agent_id``), the tenant from the query,
    the headers or the key (``tenant``), the result answered as ``out``."""
    build: Callable[..., ops.Operation[Any]] = spec

    async def endpoint(
        mem: ops.MemoryApi,
        request: Request,
        given: OperationQuery | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        **path: str,
    ) -> Response:
        if given is not None:
            arguments, user_id, agent_id = given.arguments(), given.user_id, given.agent_id
        else:
            arguments = {}
        op = build(**path, **arguments, **who(tenant(request, user_id, agent_id)))
        return _answer(spec, out, await ops.perform(mem, op))

    if query is not None:
        asked = [
            inspect.Parameter("given", _P, annotation=Annotated[OperationQuery, Depends(queried(query))])
        ]
    else:
        asked = [inspect.Parameter(n, _P, annotation=IdQuery, default=None) for n in ("user_id", "agent_id")]
    _serve(router, spec, out, doc, endpoint, asked)


def _serve(
    router: APIRouter,
    spec: type[ops.Operation[Any]],
    out: type[BaseModel],
    doc: str,
    endpoint: Callable[..., Any],
    asked: list[inspect.Parameter],
) -> None:
    route = spec.ROUTE
    if route.missing is not None or route.local is not None:
        raise TypeError(f"{spec.NAME}: its route has rules of its own (write it by hand)")
    # FastAPI reads the handler's signature: the memory, the request, what is asked, the path.
    params = [
        inspect.Parameter("mem", _P, annotation=Mem),
        inspect.Parameter("request", _P, annotation=Request),
        *asked,
        *(inspect.Parameter(name, _P, annotation=str) for name in route.path_names),
    ]
    params.sort(key=lambda p: p.default is not inspect.Parameter.empty)  # defaults last
    endpoint.__signature__ = inspect.Signature(params, return_annotation=Response)  # type: ignore[attr-defined]
    endpoint.__name__ = endpoint.__qualname__ = spec.NAME
    endpoint.__doc__ = doc
    many = typing.get_origin(ops.result_of(spec)) is list and route.key is None
    model: Any = list[out] if many else out  # type: ignore[valid-type]
    if type(None) in typing.get_args(ops.result_of(spec)):
        model = out | None
    path = route.path.removeprefix(router.prefix)
    for name in SLASHED & set(route.path_names):  # these may hold slashes (a scene path, a message id)
        path = path.replace(f"{{{name}}}", f"{{{name}:path}}")
    router.add_api_route(path, endpoint, methods=[route.method], response_model=model)


SLASHED = {"path", "message_id"}


def _answer(spec: type[ops.Operation[Any]], out: type[BaseModel], result: Any) -> Response:
    key = spec.ROUTE.key
    if key is not None:  # the result under its key (``{"deleted": [...]}``)
        return reply(out, out(**{key: result}))
    if result is None and ops.result_of(spec) is type(None):  # done, nothing to answer
        return reply(out, out())
    if isinstance(result, list):
        return reply_list(out, result)
    return reply(out, result)
