"""The four surfaces of the API (``AsyncMemory``, ``Memory``, ``MemoryClient``,
``AsyncMemoryClient``) and the gateway's request bodies agree with the one declaration of each
operation (``memstrata.operations``): the same methods, and for each the same parameter names,
order, kinds, defaults and annotations, and the same result type. A method written by hand on
one surface (rather than built from its declaration) that drifts fails here."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path
from typing import Any, assert_type

import pytest

import memstrata
from memstrata import AsyncMemory, Memory
from memstrata import operations as ops
from memstrata.client import AsyncMemoryClient, MemoryClient
from memstrata.gateway import requests

SURFACES = (AsyncMemory, Memory, MemoryClient, AsyncMemoryClient)
LIFECYCLE = {
    "open",
    "open_shared",
    "close",
    "start_background",
    "check_background",
    "health",
}  # how a surface opens and closes


def public_methods(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n)) and n not in LIFECYCLE}


def described(method: Any) -> list[tuple[str, object, object, object]]:
    """(name, kind, default, annotation) of each parameter after ``self``, then the result."""
    sig = inspect.signature(method)
    hints = typing.get_type_hints(method)
    params = list(sig.parameters.values())[1:]
    rows = [(p.name, p.kind, p.default, hints.get(p.name, p.annotation)) for p in params]
    return [*rows, ("return", None, None, hints.get("return", sig.return_annotation))]


def declared(spec: type[ops.Operation[Any]]) -> list[tuple[str, object, object, object]]:
    sig = ops.signature_of(spec)
    rows = [(p.name, p.kind, p.default, p.annotation) for p in list(sig.parameters.values())[1:]]
    return [*rows, ("return", None, None, sig.return_annotation)]


@pytest.mark.parametrize("surface", SURFACES, ids=lambda c: c.__name__)
def test_every_public_method_is_a_declared_operation(surface: type) -> None:
    assert public_methods(surface) == set(ops.BY_NAME)


@pytest.mark.parametrize("surface", SURFACES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(ops.BY_NAME))
def test_each_method_has_the_declared_names_defaults_and_annotations(surface: type, name: str) -> None:
    assert described(getattr(surface, name)) == declared(ops.BY_NAME[name])


def test_every_declaration_names_its_result_and_route() -> None:
    for spec in ops.ALL:
        assert ops.result_of(spec) is not inspect.Parameter.empty, spec.__name__
        route = spec.ROUTE
        assert route.local is not None or route.path.startswith("/v1/"), spec.__name__
        assert set(route.path_names) <= {f.name for f in dataclasses.fields(spec)}, spec.__name__  # type: ignore[arg-type]


BODIES: dict[str, type[ops.Operation[Any]]] = {
    "CaptureIn": ops.Capture,
    "RecallIn": ops.Recall,
    "BeforePromptIn": ops.BeforePrompt,
    "TurnCommittedIn": ops.TurnCommitted,
    "SessionEndIn": ops.EndSession,
    "SearchIn": ops.Search,
    "ConversationSearchIn": ops.SearchConversations,
    "DeleteMessagesIn": ops.DeleteMessages,
    "DeleteAtomsIn": ops.DeleteAtoms,
    "AtomPatchIn": ops.UpdateAtom,
    "SceneIn": ops.WriteScene,
    "PersonaIn": ops.WritePersona,
    "PersonaRequestIn": ops.RequestPersona,
    "ImportIn": ops.ImportSeed,
    "PinIn": ops.PinAtom,
    "TtlIn": ops.SetAtomTtl,
    "RebuildIn": ops.RebuildScenes,
    "MessagesQuery": ops.Messages,
    "AtomsQuery": ops.Atoms,
    "CountsQuery": ops.Counts,
    "CreateKeyIn": ops.CreateKey,
    "VerifyKeyIn": ops.VerifyKey,
}


@pytest.mark.parametrize("model_name", sorted(BODIES))
def test_each_request_body_or_query_takes_the_declared_parameters_with_their_defaults(
    model_name: str,
) -> None:
    spec, model = BODIES[model_name], getattr(requests, model_name)
    in_path = set(spec.ROUTE.path_names) | {"user_id", "agent_id"}
    wanted = {
        f.name: (f.default is dataclasses.MISSING, None if f.default is dataclasses.MISSING else f.default)
        for f in dataclasses.fields(spec)  # type: ignore[arg-type]
        if f.name not in in_path
    }
    got = {
        n: (f.is_required(), None if f.is_required() else f.default)
        for n, f in model.model_fields.items()
        if n not in {"user_id", "agent_id", "all_tenants"}
    }
    assert got == wanted
    assert tuple(wanted) == model.ARGUMENTS


def test_the_forget_query_takes_the_tenant_as_the_request_names_it() -> None:
    """Forgetting names its tenant itself: the query's ``user_id`` is required and, with
    ``agent_id``, an argument of the operation (never resolved from the headers or the key)."""
    model = requests.ForgetQuery
    assert model.ARGUMENTS == ("user_id", "agent_id")
    assert model.model_fields["user_id"].is_required() and not model.model_fields["agent_id"].is_required()
    assert [f.name for f in dataclasses.fields(ops.Forget)] == ["user_id", "agent_id"]


# What an edge holds (``operations.api``): the same members, built from the same declarations.
PROTOCOLS = (ops.MemoryApi, ops.BlockingMemoryApi)


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda c: c.__name__)
def test_the_protocols_have_a_member_for_every_declared_operation(protocol: type) -> None:
    assert public_methods(protocol) == set(ops.BY_NAME)


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(ops.BY_NAME))
def test_each_protocol_member_has_the_declared_signature(protocol: type, name: str) -> None:
    member = getattr(protocol, name)
    assert member.__name__ == name  # the stub under the decorator names its declaration
    assert described(member) == declared(ops.BY_NAME[name])
    assert inspect.iscoroutinefunction(member) is (protocol is ops.MemoryApi)


def test_the_protocols_close_as_the_surfaces_do() -> None:
    for protocol, surfaces in (
        (ops.MemoryApi, (AsyncMemory, AsyncMemoryClient)),
        (ops.BlockingMemoryApi, (Memory, MemoryClient)),
    ):
        for surface in surfaces:
            assert described(surface.close) == described(protocol.close), surface.__name__


def _held_by_edges(
    a: AsyncMemory, ac: AsyncMemoryClient, m: Memory, mc: MemoryClient
) -> tuple[ops.MemoryApi, ops.MemoryApi, ops.BlockingMemoryApi, ops.BlockingMemoryApi]:
    """Never called: mypy --strict checks here that each surface satisfies its protocol, member
    by member (a parameter or result that drifts on one surface is a type error here)."""
    return a, ac, m, mc


async def _opened_as_typed(here: Path, location: str) -> None:
    """Never called: mypy --strict checks the types ``open`` gives. A path (or nothing) is memory
    here; a string may be a server's URL too, so it is either, and both are the protocol."""
    assert_type(Memory.open(here), Memory)
    assert_type(Memory.open(), Memory)
    assert_type(Memory.open(location), Memory | MemoryClient)
    assert_type(await AsyncMemory.open(here), AsyncMemory)
    assert_type(await AsyncMemory.open(location), AsyncMemory | AsyncMemoryClient)
    blocking: memstrata.BlockingMemoryApi = Memory.open(location)
    awaited: memstrata.MemoryApi = await AsyncMemory.open(location)
    print(blocking, awaited)


async def _never_opened() -> ops.MemoryApi:
    raise AssertionError("the schema is read without opening a memory")


def test_every_declared_route_is_served_at_its_method_and_path() -> None:
    """The client sends each operation where its declaration says (``Route``); the gateway's
    routes are built from the declarations (``routes.declared``) but health, which runs no
    operation."""
    from memstrata.gateway.app import create_app
    from memstrata.settings import load_settings

    paths = create_app(load_settings(Path("unused")), _never_opened).openapi()["paths"]
    served = {(method.upper(), path) for path, item in paths.items() for method in item}
    declared = {(s.ROUTE.method, s.ROUTE.path): s.NAME for s in ops.ALL if s.ROUTE.local is None}
    assert {route: name for route, name in declared.items() if route not in served} == {}


def test_every_native_route_but_health_is_built_from_its_declaration() -> None:
    import importlib
    import pkgutil

    from fastapi.routing import APIRoute

    from memstrata.gateway import routes
    from memstrata.gateway.routes import declared as built

    native = []
    for info in pkgutil.iter_modules(routes.__path__):
        router = getattr(importlib.import_module(f"{routes.__name__}.{info.name}"), "router", None)
        native += [r for r in (router.routes if router else ()) if isinstance(r, APIRoute)]
    served = {(m, r.path): r.endpoint.__module__ for r in native for m in r.methods or ()}
    assert len(native) == len(served) == 44
    by_hand = {route for route, module in served.items() if module != built.__name__}
    assert by_hand == {("GET", "/v1/health")}
