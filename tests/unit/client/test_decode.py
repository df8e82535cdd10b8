"""The client reads the server's JSON into the library's records through pydantic, against the
result type each operation declares: the records come back as the library returns them, unknown
fields are ignored, and an answer of the wrong shape is a ``RemoteError`` naming the field."""

from __future__ import annotations

import contextlib

import pytest

from memstrata import operations as ops
from memstrata.client.decode import decode
from memstrata.errors import RemoteError
from memstrata.models import Atom, AtomType, Tenant

ATOM = {
    "id": "a1",
    "tenant": {"user_id": "maya", "agent_id": "default"},
    "type": "episodic",
    "content": "Maya moved to Lisbon.",
    "source_message_ids": ["m1", "m2"],
    "metadata": {"app": "crm"},
    "seq": 7,
    "expires_at": None,
}


def test_an_answer_becomes_the_record_the_library_returns() -> None:
    atom = decode(Atom, ATOM)
    assert atom == Atom(
        "a1",
        Tenant("maya"),
        AtomType.EPISODIC,
        "Maya moved to Lisbon.",
        source_message_ids=("m1", "m2"),
        metadata={"app": "crm"},
        seq=7,
    )
    assert isinstance(atom.type, AtomType) and isinstance(atom.source_message_ids, tuple)
    assert decode(ops.result_of(ops.Atoms), [ATOM, ATOM]) == [atom, atom]
    assert decode(ops.result_of(ops.VerifyKey), None) is None


def test_fields_a_newer_server_adds_are_ignored() -> None:
    assert decode(Atom, {**ATOM, "added_later": {"x": 1}}) == decode(Atom, ATOM)


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        ({**ATOM, "seq": "seven"}, "seq"),
        ({**ATOM, "type": "gossip"}, "type"),
        ({k: v for k, v in ATOM.items() if k != "content"}, "content"),
        ({**ATOM, "tenant": "maya"}, "tenant"),
    ],
)
def test_an_answer_of_the_wrong_shape_is_a_remote_error_naming_the_field(
    answer: dict[str, object], named: str
) -> None:
    with pytest.raises(RemoteError, match=f"unexpected answer from the server: {named}"):
        decode(Atom, answer)


@pytest.mark.parametrize("spec", ops.ALL, ids=lambda s: s.NAME)
def test_every_declared_result_can_be_read(spec: type[ops.Operation[object]]) -> None:
    """A result type pydantic cannot read would fail here, not at a user's call: a null answer is
    the result (an optional one) or a ``RemoteError``, never another exception."""
    with contextlib.suppress(RemoteError):
        assert decode(ops.result_of(spec), None) is None
