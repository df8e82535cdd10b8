"""Routes built from the operations' declarations (``memstrata.operations``), as the facade's
methods and the HTTP clients' are: the method and path are the declaration's ``Route``, the body
or query its request model (``gateway.requests``, built from the same declaration), the answer
the response model of its result (``gateway.responses``, built from the record), and the handler
builds the operation and runs it (``operations.perform``). What a route adds of its own is an
option here: ``admin`` (the admin key is needed), ``check`` (a rule on the arguments, such as
the tenants named in seed history), ``missing`` (a 404 for the declared ``Route.missing``
answer), ``answer`` (what the server adds to the result, such as its proxy's counters); a
listing's ``all_tenants`` (``requests.ListingQuery``) needs the admin key and lists every tenant,
and a ``requests.NamedTenantQuery`` takes the tenant as the request names it, never from the
headers or the key (forgetting a tenant). Only health is written by hand (``routes.service``): it
runs no operation."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from memstrata import operations as ops
from memstrata.errors import NotFoundError
from memstrata.gateway.access import principal_of, require_admin
from memstrata.gateway.context import Mem, reply, reply_list, tenant, tenant_of, who
from memstrata.gateway.requests import (
    ArgumentsBody,
    EmptyIn,
    ListingQuery,
    NamedTenantQuery,
    OperationQuery,
    parsed,
    queried,
)

IdQuery = Annotated[str | None, Query(min_length=1, max_length=512)]
Check = Callable[[Request, Mapping[str, Any]], None]  # raises when the arguments may not be run
Answer = Callable[[Request, Any], BaseModel]  # the result as answered, with what the server adds
_P = inspect.Parameter.POSITIONAL_OR_KEYWORD


def body_route(
    router: APIRouter,
    spec: type[ops.Operation[Any]],
    body: type[ArgumentsBody] | None,
    out: type[BaseModel],
    doc: str,
    *,
    admin: str | None = None,
    check: Check | None = None,
) -> None:
    """Serve ``spec`` where it is declared: its arguments from the path and the JSON ``body``
    (``None``: it takes none, an empty object may be sent), the tenant (for an operation on one)
    from the body, the headers or the key (``tenant_of``), the result answered as ``out``;
    ``doc`` is what the API docs say of it. ``admin`` names what needs the admin key (403
    otherwise), ``check`` looks at the arguments before anything runs."""
    build: Callable[..., ops.Operation[Any]] = spec  # the declaration's constructor: its parameters
    tenanted = _tenanted(spec)

    async def endpoint(
        mem: ops.MemoryApi,
        request: Request,
        given: ArgumentsBody | None = None,
        body: EmptyIn | None = None,  # what an operation without arguments may be sent: {}
        **path: str,
    ) -> Response:
        if admin is not None:
            require_admin(principal_of(request.scope), admin)
        arguments = given.arguments() if given is not None else {}
        if check is not None:
            check(request, arguments)
        if tenanted:
            arguments.update(who(tenant_of(request, given)))
        return _answer(spec, out, await ops.perform(mem, build(**path, **arguments)))

    if body is None:
        asked = [inspect.Parameter("body", _P, annotation=EmptyIn | None, default=None)]
    else:
        asked = [inspect.Parameter("given", _P, annotation=Annotated[ArgumentsBody, Depends(parsed(body))])]
    _serve(router, spec, out, doc, endpoint, asked)


def query_route(
    router: APIRouter,
    spec: type[ops.Operation[Any]],
    out: type[BaseModel],
    doc: str,
    query: type[OperationQuery] | None = None,
    *,
    admin: str | None = None,
    missing: str | None = None,
    check: Check | None = None,
    answer: Answer | None = None,
) -> None:
    """Serve ``spec`` (a GET or DELETE) where it is declared: its arguments from the path and the
    ``query`` model (else only the tenant, ``user_id`` / ``agent_id``, of an operation on one),
    the tenant from the query, the headers or the key (``tenant``; a ``NamedTenantQuery``: from
    the query alone), the result answered as ``out``. ``admin`` and ``check`` as in
    ``body_route``; ``missing`` names the kind of record the declared ``Route.missing`` answer
    says is not there (a 404 ``not_found``); ``answer`` makes what is answered of the result."""
    build: Callable[..., ops.Operation[Any]] = spec
    tenanted = _tenanted(spec) and not (query is not None and issubclass(query, NamedTenantQuery))

    async def endpoint(
        mem: ops.MemoryApi,
        request: Request,
        given: OperationQuery | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        **path: str,
    ) -> Response:
        if admin is not None:
            require_admin(principal_of(request.scope), admin)
        arguments: dict[str, Any] = {}
        if given is not None:
            arguments, user_id, agent_id = given.arguments(), given.user_id, given.agent_id
        if check is not None:
            check(request, arguments)
        if tenanted:
            arguments.update(who(tenant(request, user_id, agent_id)))
        if isinstance(given, ListingQuery) and given.all_tenants:
            require_admin(principal_of(request.scope), "all_tenants")
            arguments["user_id"] = None  # the facade's every tenant
        result = await ops.perform(mem, build(**path, **arguments))
        if missing is not None and spec.ROUTE.missing is not None and result == spec.ROUTE.missing[0]:
            raise NotFoundError(missing, path[spec.ROUTE.path_names[-1]])
        return _answer(spec, out, result if answer is None else answer(request, result))

    if query is not None:
        asked = [
            inspect.Parameter("given", _P, annotation=Annotated[OperationQuery, Depends(queried(query))])
        ]
    elif tenanted:
        asked = [inspect.Parameter(n, _P, annotation=IdQuery, default=None) for n in ("user_id", "agent_id")]
    else:
        asked = []
    if (spec.ROUTE.missing is None) != (missing is None):
        raise TypeError(f"{spec.NAME}: name the missing record's kind when, and only when, it is declared")
    _serve(router, spec, out, doc, endpoint, asked)


def _tenanted(spec: type[ops.Operation[Any]]) -> bool:
    """Whether ``spec`` acts for one tenant (it takes ``user_id``), rather than for the server."""
    return "user_id" in {f.name for f in dataclasses.fields(spec)}  # type: ignore[arg-type]


def _serve(
    router: APIRouter,
    spec: type[ops.Operation[Any]],
    out: type[BaseModel],
    doc: str,
    endpoint: Callable[..., Any],
    asked: list[inspect.Parameter],
) -> None:
    route = spec.ROUTE
    if route.local is not None:
        raise TypeError(f"{spec.NAME}: it runs where the caller is (write its route by hand)")
    # FastAPI reads the handler's signature: the memory, the request, what is asked, the path.
    hints = ops.hints_of(spec)
    params = [
        inspect.Parameter("mem", _P, annotation=Mem),
        inspect.Parameter("request", _P, annotation=Request),
        *asked,
        *(inspect.Parameter(name, _P, annotation=_in_path(hints[name])) for name in route.path_names),
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


def _in_path(hint: Any) -> Any:
    """A path parameter with the bounds its declaration gives it (``Field`` becomes ``Path``)."""
    if typing.get_origin(hint) is not Annotated:
        return hint
    kind, *extras = typing.get_args(hint)
    bounds: dict[str, Any] = {}
    for extra in extras:
        if isinstance(extra, FieldInfo):
            for rule in extra.metadata:
                bounds.update({k: getattr(rule, k) for k in ("min_length", "max_length") if hasattr(rule, k)})
    return Annotated[kind, Path(**bounds)]


def _answer(spec: type[ops.Operation[Any]], out: type[BaseModel], result: Any) -> Response:
    key = spec.ROUTE.key
    if key is not None:  # the result under its key (``{"deleted": [...]}``)
        return reply(out, out(**{key: result}))
    if result is None and ops.result_of(spec) is type(None):  # done, nothing to answer
        return reply(out, out())
    if isinstance(result, list):
        return reply_list(out, result)
    return reply(out, result)
