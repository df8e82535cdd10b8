"""Every route and dependency of the gateway is a coroutine: FastAPI runs a plain function in
AnyIO's thread pool, a thread hop per request (and a pool of up to 40 threads) for work as small
as returning a parsed body."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from memstrata.gateway.app import create_app
from memstrata.settings import Settings


def _routes(routes: list[Any]) -> Iterator[APIRoute]:
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        inner = getattr(route, "router", None) or getattr(route, "original_router", None)
        if inner is not None and hasattr(inner, "routes"):
            yield from _routes(inner.routes)


def _plain(dependant: Dependant) -> Iterator[str]:
    for sub in dependant.dependencies:
        call = sub.call
        if call is not None and not (
            inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(type(call).__call__)
        ):
            yield getattr(call, "__qualname__", repr(call))
        yield from _plain(sub)


def test_no_route_or_dependency_runs_in_a_thread() -> None:
    async def never() -> Any:
        raise AssertionError("not opened")

    app = create_app(Settings(), never)
    routes = list(_routes(app.routes))
    assert len(routes) > 50  # the walk reached the included routers
    plain = {
        f"{route.path}: {name}"
        for route in routes
        for name in ([] if inspect.iscoroutinefunction(route.endpoint) else [route.endpoint.__qualname__])
        + list(_plain(route.dependant))
    }
    assert not plain
