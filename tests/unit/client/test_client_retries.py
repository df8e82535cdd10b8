"""The client's retry, backoff and circuit-breaker rules, over httpx's own mock transport (what
was sent is asserted; the server's side is scripted per request)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import httpx
import pytest

from memstrata.client import AsyncMemoryClient, CircuitBreaker, MemoryClient
from memstrata.errors import CircuitOpenError, InputError, RemoteError, TurnLimitError

STATUS_OK = {"sessions": [], "messages": 0, "atoms": 0, "embedder": None, "vectors_note": None, "tenants": []}


def scripted(*answers: httpx.Response | Exception) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []
    queue: Iterator[httpx.Response | Exception] = iter(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = next(queue)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.MockTransport(handle), seen


def client(transport: httpx.MockTransport, **kw: object) -> MemoryClient:
    return MemoryClient("http://memstrata.test", transport=transport, backoff=0.001, **kw)


def test_an_idempotent_call_is_retried_on_5xx_and_connection_errors() -> None:
    transport, seen = scripted(
        httpx.Response(503),
        httpx.ConnectError("refused"),
        httpx.Response(500, json={"error": {"code": "internal_error", "message": "x"}}),
        httpx.Response(200, json=STATUS_OK),
    )
    assert client(transport).status().messages == 0
    assert len(seen) == 4


def test_retries_give_up_with_a_remote_error() -> None:
    transport, seen = scripted(*[httpx.Response(502)] * 4)
    with pytest.raises(RemoteError) as failed:
        client(transport, retries=3).status()
    assert failed.value.status == 502 and len(seen) == 4


def test_a_non_idempotent_call_is_not_retried_after_a_500() -> None:
    transport, seen = scripted(
        httpx.Response(500, json={"error": {"code": "internal_error", "message": "boom"}})
    )
    with pytest.raises(RemoteError):
        client(transport).update_atom("a1", content="x")
    assert len(seen) == 1


def test_a_non_idempotent_call_is_retried_when_it_never_reached_the_server() -> None:
    atom = {
        "id": "a2", "tenant": {"user_id": "default", "agent_id": "default"}, "type": "persona", "content": "x",
        "priority": 50, "scene_name": "", "source_message_ids": [], "metadata": {}, "session_key": "",
        "created_at": 0, "updated_at": 0, "version": 2, "superseded_by": None, "seq": 3,
    }  # fmt: skip
    transport, seen = scripted(httpx.ConnectError("refused"), httpx.Response(200, json=atom))
    assert client(transport).update_atom("a1", content="x").version == 2
    assert len(seen) == 2


def test_4xx_are_not_retried_and_become_library_errors() -> None:
    transport, seen = scripted(
        httpx.Response(
            422, json={"error": {"code": "validation_error", "message": "must be 1-1000", "field": "limit"}}
        ),
        httpx.Response(
            429, json={"error": {"code": "turn_limit", "message": "x", "turn_id": "t", "limit": 3}}
        ),
    )
    c = client(transport)
    with pytest.raises(InputError) as invalid:
        c.search("x")
    assert invalid.value.item == "limit" and invalid.value.message == "limit: must be 1-1000"
    with pytest.raises(TurnLimitError):
        c.search("y")
    assert len(seen) == 2


def test_captured_messages_without_id_or_time_get_an_id_so_a_retry_stores_them_once() -> None:
    answer: dict[str, list[str]] = {"stored": [], "duplicates": [], "dropped": [], "degradations": []}
    transport, seen = scripted(httpx.Response(503), httpx.Response(200, json=answer))
    client(transport).capture(
        [{"role": "user", "content": "hi"}, {"role": "user", "content": "t", "timestamp": 5}]
    )
    assert seen[0].content == seen[1].content  # the same ids both times
    sent = json.loads(seen[0].content)["messages"]
    assert "id" in sent[0] and "id" not in sent[1]  # a timed message gets its stable id on the server


def test_the_circuit_opens_after_repeated_failures_and_closes_after_a_good_trial() -> None:
    now = [0.0]  # the breaker's clock, stepped here: no sleep, no race with a slow machine
    breaker = CircuitBreaker(threshold=2, reset_after=10.0, clock=lambda: now[0])
    transport, seen = scripted(httpx.Response(503), httpx.Response(503), httpx.Response(200, json=STATUS_OK))
    c = client(transport, retries=0, breaker=breaker)
    for _ in range(2):
        with pytest.raises(RemoteError):
            c.status()
    now[0] = 9.9
    with pytest.raises(CircuitOpenError):
        c.status()
    assert len(seen) == 2  # refused without calling
    now[0] = 10.1
    assert c.status().atoms == 0  # the trial call goes through and closes the circuit
    assert len(seen) == 3


async def test_the_async_client_runs_the_same_rules() -> None:
    answers: list[Callable[[], httpx.Response]] = [
        lambda: httpx.Response(503),
        lambda: httpx.Response(200, json=STATUS_OK),
    ]
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers[len(seen) - 1]()

    async with AsyncMemoryClient(
        "http://memstrata.test", transport=httpx.MockTransport(handle), backoff=0.001
    ) as c:
        assert (await c.status()).messages == 0
    assert len(seen) == 2 and seen[0].headers["user-agent"] == "memstrata-client"
