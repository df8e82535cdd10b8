"""The native API's response models are built from the records they carry (``gateway.responses``):
a field added to a record is on the wire, with its JSON type, without a line written for it."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import pytest

from memstrata import models as m
from memstrata.gateway import responses
from memstrata.gateway.responses import Wire, wired


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass(frozen=True)
class Inner:
    name: str


@dataclasses.dataclass(frozen=True)
class Outer:
    colour: Colour
    pairs: tuple[tuple[str, str | None], ...]
    inner: Inner
    many: tuple[Inner, ...] = ()
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    when: int | None = None


def test_a_record_becomes_a_model_with_its_fields_and_their_json_types() -> None:
    @wired(Inner)
    class InnerOut(Wire):
        pass

    @wired(Outer, when="Epoch ms.")
    class OuterOut(Wire):
        """An outer record."""

    value = Outer(Colour.RED, (("maya", None),), Inner("a"), (Inner("b"),), {"k": 1})
    assert list(OuterOut.model_fields) == [f.name for f in dataclasses.fields(Outer)]
    assert all(f.is_required() for f in OuterOut.model_fields.values())
    assert OuterOut.model_validate(value).model_dump(mode="json") == {
        "colour": "red",
        "pairs": [["maya", None]],
        "inner": {"name": "a"},
        "many": [{"name": "b"}],
        "extra": {"k": 1},
        "when": None,
    }
    schema = OuterOut.model_json_schema()
    assert schema["description"] == "An outer record."
    assert schema["properties"]["when"]["description"] == "Epoch ms."


def test_a_description_of_a_field_the_record_lacks_is_refused() -> None:
    with pytest.raises(TypeError, match="no fields"):

        @wired(Inner, nmae="a typo")
        class InnerOut(Wire):
            pass


@pytest.mark.parametrize(
    ("model", "record"),
    [
        (responses.AtomOut, m.Atom),
        (responses.MessageOut, m.Message),
        (responses.SearchOut, m.SearchResult),
        (responses.KeyOut, m.ApiKey),
        (responses.SessionStatusOut, m.SessionStatus),
        (responses.QueryEmbeddingOut, m.QueryEmbeddingStatus),
    ],
)
def test_the_served_models_carry_their_records_fields(model: type[Wire], record: type) -> None:
    assert list(model.model_fields) == [f.name for f in dataclasses.fields(record)]


def test_the_status_model_carries_the_status_every_field_required_and_the_proxy_counters() -> None:
    fields = responses.StatusOut.model_fields
    assert list(fields) == ["proxy", *(f.name for f in dataclasses.fields(m.Status))]
    assert [n for n, f in fields.items() if not f.is_required()] == ["proxy"]  # the server's own
