"""The one error table (``errors.WIRE``): every error the gateway answers with crosses the wire
and is raised back by the client as the same class, with the same context attributes."""

from __future__ import annotations

import httpx
import pytest

from memstrata import errors as e
from memstrata.client.calls import Call
from memstrata.client.exchange import raise_for
from memstrata.gateway.errors import problem_of, render

RAISED = [
    e.AccessError("this key may not reach tenant bob/default"),
    e.NotFoundError("atom", "a-1", tenant="ann/default"),
    e.PathError("not a scene path", path="../etc/passwd"),
    e.ConflictError("atom a-1 was superseded", current="a-2"),
    e.TurnLimitError("turn-7", 3),
    e.TooManyFailuresError("too many bad keys from this client", retry_after=4),
    e.InputError("must be between 1 and 1000", item="limit"),
    e.ConfigError("reindex needs an embedder"),
    e.NotDoneError("the pipeline's workers did not finish within 25 s: 3 sessions still to extract"),
]
CONTEXT = ("kind", "key", "path", "current", "turn_id", "limit", "item", "retry_after")


def answered(exc: e.MemstrataError) -> httpx.Response:
    status, body = render(problem_of(exc), "/v1/atoms", "req-1")
    return httpx.Response(status, json=body)


def call() -> Call[None]:
    return Call("GET", "/v1/atoms", lambda d: None)


@pytest.mark.parametrize("exc", RAISED, ids=lambda x: type(x).__name__)
def test_an_error_comes_back_as_its_own_class_with_its_context(exc: e.MemstrataError) -> None:
    with pytest.raises(e.MemstrataError) as back:
        raise_for(answered(exc), call())
    assert type(back.value) is type(exc)
    for name in CONTEXT:
        assert getattr(back.value, name, None) == getattr(exc, name, None), name
    if not isinstance(exc, e.ConfigError):  # the client says the server refused it
        assert back.value.message == exc.message


def test_every_error_the_gateway_answers_with_is_in_the_table() -> None:
    for exc in RAISED:
        wire = e.wire_of(exc)
        assert wire is not None and isinstance(exc, wire.kind)
        assert problem_of(exc).status == wire.status and problem_of(exc).code == wire.code
    assert (
        problem_of(e.AccessError("no")).status == 403 and problem_of(e.AccessError("no")).code == "forbidden"
    )


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (e.StorageError("/data/memstrata.db", "disk full"), "store_unavailable"),
        (e.EmbeddingError("timeout"), "embedding_unavailable"),
        (e.ModelError("HTTP 500"), "engine_unavailable"),
    ],
)
def test_a_server_failure_is_a_remote_error_carrying_the_code(exc: e.MemstrataError, code: str) -> None:
    with pytest.raises(e.RemoteError) as back:
        raise_for(answered(exc), call())
    assert back.value.status == 503 and back.value.code == code


def test_an_error_that_is_not_memstratas_is_an_internal_error_without_internals() -> None:
    problem = problem_of(KeyError("secret internals"))
    assert (problem.status, problem.code) == (500, "internal_error")
    assert "secret" not in problem.message


def test_codes_the_middleware_answers_with_are_read_back() -> None:
    unauthorized = httpx.Response(401, json={"error": {"code": "unauthorized", "message": "invalid token"}})
    with pytest.raises(e.ConfigError, match="refused the call: invalid token"):
        raise_for(unauthorized, call())
    too_big = httpx.Response(413, json={"error": {"code": "payload_too_large", "message": "too big"}})
    with pytest.raises(e.InputError, match="too big"):
        raise_for(too_big, call())
