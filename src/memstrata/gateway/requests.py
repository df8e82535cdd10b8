"""Request models of the native API, built from the operations' declarations
(``memstrata.operations``): a body has the operation's parameters, with their defaults and the
bounds of their annotations, so a bad value is a 422 naming the field before anything runs (the
facade checks the rest and names the field too). Only what the wire spells differently from the
library is written here: messages as JSON objects, the seed data, the layers by name; and each
body's name, its OpenAPI schema's (``SessionEndIn`` for ``end_session``, ``AtomPatchIn`` for
``update_atom``: no rule derives them from the operations', and clients know them), hence one
line per body rather than a loop over the declarations."""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field, Json, StringConstraints, create_model, model_validator

from memstrata import operations as ops
from memstrata.operations.base import Millis

Id = Annotated[str, StringConstraints(min_length=1, max_length=512)]
MAX_BATCH = 100  # messages per capture
MAX_TRANSCRIPT = 5000  # messages per turn_committed
TENANT = ("user_id", "agent_id")
B = TypeVar("B", bound="ArgumentsBody")
Q = TypeVar("Q", bound="OperationQuery")


def _check_text(value: Any, where: str) -> None:
    """Strings must be encodable (JSON can carry lone surrogates; no store can keep them)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{where}: not valid Unicode text (lone surrogate)") from None
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_text(k, where)
            _check_text(v, f"{where}.{k}")
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _check_text(v, f"{where}[{i}]")


class Body(BaseModel):
    """Base of request bodies: unknown fields are errors, every string is valid Unicode."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _unicode(self) -> Body:
        for name in type(self).model_fields:
            _check_text(getattr(self, name), name)
        return self


class TenantBody(Body):
    """The tenant: these fields, else the ``x-memstrata-user-id`` / ``x-memstrata-agent-id``
    headers, else ``default``."""

    user_id: Id | None = None
    agent_id: Id | None = None


class MessageIn(Body):
    role: Literal["user", "assistant"]
    content: Annotated[str, StringConstraints(max_length=200_000)]
    id: Id | None = None
    name: Annotated[str, StringConstraints(max_length=200)] | None = None
    timestamp: Millis | None = None
    metadata: dict[str, Any] | None = Field(
        None,
        description="A JSON object kept on the message (at most 16 KiB); atoms made from it inherit its keys.",
    )


class ContentPart(BaseModel):
    """An OpenAI-style content part; only ``text`` parts are kept."""

    model_config = ConfigDict(extra="allow")
    type: Annotated[str, StringConstraints(max_length=100)]
    text: str | None = None


class TurnMessageIn(Body):
    """A transcript message as hosts send it: any role (only user/assistant are stored), text or
    content parts, a timestamp in epoch ms or ISO 8601."""

    model_config = ConfigDict(extra="ignore")
    role: Annotated[str, StringConstraints(min_length=1, max_length=50)]
    content: Annotated[str, StringConstraints(max_length=200_000)] | list[ContentPart] = ""
    id: Id | None = None
    name: Annotated[str, StringConstraints(max_length=200)] | None = None
    timestamp: Millis | Annotated[str, StringConstraints(max_length=64)] | None = None


class EmptyIn(Body):
    pass


class ArgumentsBody(Body):
    """A body built from an operation's declaration (``request_model``, ``admin_model``)."""

    ARGUMENTS: ClassVar[tuple[str, ...]] = ()

    def arguments(self) -> dict[str, Any]:
        """The operation's arguments (the tenant apart), as the facade takes them: nested
        models as plain dicts."""
        return {name: _plain(getattr(self, name)) for name in self.ARGUMENTS}


class OperationBody(TenantBody, ArgumentsBody):
    """The body of an operation acting for a tenant (``request_model``)."""


class AdminBody(ArgumentsBody):
    """The body of an operation that acts for no tenant (the key routes, ``admin_model``):
    ``user_id`` / ``agent_id`` are unknown fields there."""


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_none=True)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class OperationQuery(BaseModel):
    """The query parameters of a GET route, built from an operation's declaration
    (``query_model``); unknown parameters are ignored, as FastAPI does for listed ones."""

    model_config = ConfigDict(extra="ignore")
    ARGUMENTS: ClassVar[tuple[str, ...]] = ()
    user_id: Id | None = None
    agent_id: Id | None = None

    def arguments(self) -> dict[str, Any]:
        """The operation's arguments (the tenant apart), as the facade takes them."""
        return {name: getattr(self, name) for name in self.ARGUMENTS}


class ListingQuery(OperationQuery):
    """A listing's query: ``all_tenants`` lists every tenant (the facade's ``user_id=None``)."""

    all_tenants: bool = Field(False, description="List every tenant (administration).")


class NamedTenantQuery(OperationQuery):
    """The query of an operation on a tenant the request names itself (forgetting a tenant):
    ``user_id`` is required and, with ``agent_id``, is one of the operation's arguments as given
    (``agent_id`` absent: every agent); neither is ever taken from the headers or the key."""

    user_id: Id = Field(description="The user (required: never implied).")


def _fields(spec: type[ops.Operation[Any]], wire: dict[str, Any]) -> dict[str, Any]:
    """Every parameter of ``spec`` but the tenant's (body, query, headers or the key) and those in
    the path, with the declared annotation and default; ``wire`` gives the JSON type of a
    parameter the library takes as a record."""
    hints = ops.hints_of(spec)
    skip = set(TENANT) | set(spec.ROUTE.path_names)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(spec):  # type: ignore[arg-type]
        if f.name not in skip:
            default = ... if f.default is dataclasses.MISSING else f.default
            fields[f.name] = (wire.get(f.name, hints[f.name]), default)
    return fields


def request_model(spec: type[ops.Operation[Any]], name: str, **wire: Any) -> type[OperationBody]:
    """The JSON body of ``spec``'s route (see ``_fields``)."""
    fields = _fields(spec, wire)
    model: type[OperationBody] = create_model(name, __base__=OperationBody, **fields)
    model.ARGUMENTS = tuple(fields)
    return model


def admin_model(spec: type[ops.Operation[Any]], name: str, **wire: Any) -> type[AdminBody]:
    """The JSON body of an admin operation's route: ``request_model`` without the tenant."""
    fields = _fields(spec, wire)
    model: type[AdminBody] = create_model(name, __base__=AdminBody, **fields)
    model.ARGUMENTS = tuple(fields)
    return model


def query_model(spec: type[ops.Operation[Any]], name: str, base: type[Q], **wire: Any) -> type[Q]:
    """The query parameters of ``spec``'s GET or DELETE route (see ``_fields``); with a
    ``NamedTenantQuery`` base, the tenant is among the arguments."""
    fields = _fields(spec, wire)
    model: type[Q] = create_model(name, __base__=base, **fields)
    model.ARGUMENTS = tuple(fields) + (TENANT if issubclass(base, NamedTenantQuery) else ())
    return model


@functools.cache
def queried(model: type[Q]) -> Callable[..., Awaitable[Q]]:
    """A dependency reading ``model`` from the query string (``Depends(queried(AtomsQuery))``).
    A coroutine, so FastAPI calls it on the event loop: a plain function it would send to
    AnyIO's thread pool, a thread hop per request for nothing."""

    async def parse(query: Any) -> Q:
        return query  # type: ignore[no-any-return]

    param = inspect.Parameter(
        "query", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Annotated[model, Query()]
    )
    parse.__signature__ = inspect.Signature([param], return_annotation=model)  # type: ignore[attr-defined]
    return parse


@functools.cache
def parsed(model: type[B]) -> Callable[..., Awaitable[B]]:
    """A dependency reading ``model`` from the request body (``Depends(parsed(SearchIn))``): the
    route is typed with the base class, FastAPI validates and documents the model itself (a
    coroutine, as ``queried``'s)."""

    async def parse(body: Any) -> B:
        return body  # type: ignore[no-any-return]

    param = inspect.Parameter("body", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=model)
    parse.__signature__ = inspect.Signature([param], return_annotation=model)  # type: ignore[attr-defined]
    return parse


MessagesIn = Annotated[list[MessageIn], Field(min_length=1, max_length=MAX_BATCH)]
LayersIn = Annotated[list[Literal["L0", "L1"]], Field(min_length=1, max_length=2)]

CaptureIn = request_model(ops.Capture, "CaptureIn", messages=MessagesIn)
# Metadata filters: a JSON object in a body, JSON text in a query string (``?filters={"app":"crm"}``).
FiltersIn = dict[str, Any] | None
FiltersQuery = Annotated[
    Json[dict[str, Any]] | None,
    Field(description='Metadata filters as JSON: {"key": value} or {"key": {"in": [values]}}.'),
]
RecallIn = request_model(ops.Recall, "RecallIn", filters=FiltersIn)
BeforePromptIn = request_model(ops.BeforePrompt, "BeforePromptIn")
TurnCommittedIn = request_model(
    ops.TurnCommitted,
    "TurnCommittedIn",
    messages=Annotated[list[TurnMessageIn], Field(max_length=MAX_TRANSCRIPT)],
)
SessionEndIn = request_model(ops.EndSession, "SessionEndIn")
SearchIn = request_model(ops.Search, "SearchIn", layers=LayersIn, filters=FiltersIn)
ConversationSearchIn = request_model(ops.SearchConversations, "ConversationSearchIn", filters=FiltersIn)
RememberIn = request_model(ops.Remember, "RememberIn", metadata=dict[str, Any] | None)
DeleteMessagesIn = request_model(ops.DeleteMessages, "DeleteMessagesIn")
DeleteAtomsIn = request_model(ops.DeleteAtoms, "DeleteAtomsIn")
AtomPatchIn = request_model(ops.UpdateAtom, "AtomPatchIn")
SceneIn = request_model(ops.WriteScene, "SceneIn")
PersonaIn = request_model(ops.WritePersona, "PersonaIn")
PersonaRequestIn = request_model(ops.RequestPersona, "PersonaRequestIn")
ImportIn = request_model(
    ops.ImportSeed,
    "ImportIn",
    data=Annotated[
        dict[str, Any] | list[Any],
        Field(description='Seed history: {"sessions": [...]} or [...] (see docs/http-api.md).'),
    ],
)
PinIn = request_model(ops.PinAtom, "PinIn")
TtlIn = request_model(ops.SetAtomTtl, "TtlIn")
RebuildIn = request_model(ops.RebuildScenes, "RebuildIn")
# The wire's tenant pairs: JSON has no tuples, so each is a list of exactly two.
CreateKeyIn = admin_model(
    ops.CreateKey,
    "CreateKeyIn",
    tenants=Annotated[
        list[Annotated[list[Id | None], Field(min_length=2, max_length=2)]],
        Field(min_length=1, max_length=100, description="[user_id, agent_id or null (every agent)] pairs."),
    ],
)
VerifyKeyIn = admin_model(ops.VerifyKey, "VerifyKeyIn")
MessagesQuery = query_model(ops.Messages, "MessagesQuery", ListingQuery, filters=FiltersQuery)
AtomsQuery = query_model(ops.Atoms, "AtomsQuery", ListingQuery, filters=FiltersQuery)
CountsQuery = query_model(ops.Counts, "CountsQuery", OperationQuery)
ForgetQuery = query_model(ops.Forget, "ForgetQuery", NamedTenantQuery)
