"""What an operation's declaration is made of: the ``Operation`` base (its result type), the
``Route`` it takes over HTTP, and the bounded value types its parameters share.

A declaration is a frozen dataclass: its fields are the operation's parameters (names, order,
which are keyword-only, defaults, annotations), its docstring the method's documentation, its
base ``Operation[R]`` the result. The bounds in the annotations (``Field(ge=..., le=...)``) are
what the gateway enforces on the wire (a 422 naming the field); the facade checks values itself.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Generic, TypeVar

from pydantic import Field

R = TypeVar("R")

Id = Annotated[str, Field(min_length=1, max_length=512)]
Key = Annotated[str, Field(min_length=1, max_length=512)]  # a session key
Millis = Annotated[int, Field(ge=0, le=10**15, description="Epoch milliseconds.")]
Limit = Annotated[int, Field(ge=1, le=1000)]
Seq = Annotated[int, Field(ge=0, le=2**62)]
QueryText = Annotated[str, Field(max_length=20_000)]
PromptText = Annotated[str, Field(max_length=200_000)]
Document = Annotated[str, Field(min_length=1, max_length=500_000)]
Short = Annotated[str, Field(max_length=200)]  # a scene name or filter
Ids = Annotated[typing.Sequence[Id], Field(max_length=5000)]  # ids per delete
AtomTypeName = Annotated[str, Field(pattern="^(persona|episodic|instruction)$")]
Mode = Annotated[str, Field(pattern="^(hybrid|keyword|vector)$")]
# Metadata filters (``models.filters``): key -> a value (equality) or {"in": [values]}.
Filters = Annotated[
    Mapping[str, Any],
    Field(
        description='Metadata filters: {"key": value} (equal) or {"key": {"in": [values]}}; every key must match.'
    ),
]
# A relevance floor in [0, 1], hit by hit; None: the store's (``search.query_floor``, ``search.min_score``).
MinScore = Annotated[float, Field(ge=0, le=1, description="Relevance floor in [0, 1].")]


@dataclass(frozen=True, slots=True)
class Route:
    """How the HTTP client sends an operation. ``GET`` and ``DELETE`` carry their arguments in
    the query, the others in a JSON body; ``{name}`` in ``path`` is that argument, quoted.
    ``key`` is the answer's field holding the result (else the answer is the result);
    ``missing`` the result a 404 ``not_found`` stands for (else it raises ``NotFoundError``).
    Retries follow ``idempotent``; ``unless`` names an argument that, when given, makes the call
    not idempotent (a time relative to the server's clock). ``local`` says, for an operation that
    reads or writes files where it runs, what to run on the server's host instead."""

    method: str
    path: str
    key: str | None = None
    missing: tuple[object] | None = None
    idempotent: bool = True
    unless: str | None = None
    local: str | None = None

    @property
    def in_query(self) -> bool:
        return self.method in ("GET", "DELETE")

    @property
    def path_names(self) -> tuple[str, ...]:
        return tuple(part[1:-1] for part in self.path.split("/") if part.startswith("{"))


class Operation(Generic[R]):
    """Base of the declarations; ``R`` is what the operation returns."""

    ROUTE: ClassVar[Route]
    NAME: ClassVar[str]  # the method's name on every surface

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.NAME = "".join(f"_{c.lower()}" if c.isupper() else c for c in cls.__name__).lstrip("_")


def result_of(spec: type[Operation[Any]]) -> Any:
    """The type an operation returns (its ``Operation[...]`` argument)."""
    for base in getattr(spec, "__orig_bases__", ()):
        if typing.get_origin(base) is Operation:
            return typing.get_args(base)[0]
    raise TypeError(f"{spec.__name__} does not declare its result (Operation[...])")


def hints_of(spec: type[Operation[Any]]) -> dict[str, Any]:
    """The parameters' annotations, resolved, bounds (``Annotated``) kept."""
    names = {f.name for f in dataclasses.fields(spec)}  # type: ignore[arg-type]
    return {k: v for k, v in typing.get_type_hints(spec, include_extras=True).items() if k in names}


def signature_of(spec: type[Operation[Any]]) -> inspect.Signature:
    """The method's signature (``self`` first), annotations resolved; the wire's bounds are left
    to the declaration (``hints_of``), so ``help()`` shows the types callers pass."""
    hints = typing.get_type_hints(spec)
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for p in inspect.signature(spec).parameters.values():
        params.append(p.replace(annotation=hints[p.name]))
    return inspect.Signature(params, return_annotation=result_of(spec))


def describe(method: Any, spec: type[Operation[Any]]) -> None:
    """Give a generated method the declaration's name, documentation and signature."""
    method.__name__ = method.__qualname__ = spec.NAME
    method.__doc__ = spec.__doc__
    method.__signature__ = sig = signature_of(spec)
    method.__annotations__ = {
        **{n: p.annotation for n, p in sig.parameters.items() if n != "self"},
        "return": sig.return_annotation,
    }
