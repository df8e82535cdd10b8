"""Custom metadata and metadata filters over HTTP: the client runs the library's scenario against
a real server; the raw routes take filters as a JSON body field or as JSON text in a query."""

from __future__ import annotations

import json

import httpx

from memstrata import Memory
from tests.e2e.gateway.conftest import KEY
from tests.support.live_server import LiveServer
from tests.support.metadata_scenario import CRM, capture_two_apps, check_filters


def test_the_client_captures_metadata_and_filters_by_it(server: LiveServer, user: str) -> None:
    with Memory.open(server.url, api_key=KEY) as mem:
        capture_two_apps(mem, user)
        check_filters(mem, user)


def test_the_wire_carries_metadata_and_filters(http: httpx.Client, user: str) -> None:
    message = {"role": "user", "content": "Biscuit the dog loves the shelter", "id": "m1", "metadata": CRM}
    captured = http.post("/v1/capture", json={"messages": [message], "session_key": "s", "user_id": user})
    assert captured.status_code == 200 and captured.json()["stored"][0]["metadata"] == CRM
    listed = http.get(
        "/v1/messages", params={"user_id": user, "filters": json.dumps({"ticket": {"in": [7]}})}
    )
    assert listed.status_code == 200 and [m["id"] for m in listed.json()] == ["m1"]
    none = http.get("/v1/messages", params={"user_id": user, "filters": json.dumps({"app": "erp"})})
    assert none.status_code == 200 and none.json() == []
    found = http.post(
        "/v1/search", json={"query": "Biscuit", "layers": ["L0"], "filters": {"app": "crm"}, "user_id": user}
    )
    assert found.status_code == 200 and [h["metadata"]["ticket"] for h in found.json()["hits"]] == [7]
    bad_query = http.get("/v1/atoms", params={"user_id": user, "filters": "{not json"})
    assert bad_query.status_code == 422 and bad_query.json()["error"]["field"] == "filters", bad_query.text
    bad_op = http.post("/v1/search", json={"query": "x", "filters": {"app": {"like": "c"}}, "user_id": user})
    assert bad_op.status_code == 422 and "filters.app" in bad_op.text, bad_op.text
    too_big = {**message, "id": "m2", "metadata": {"blob": "x" * 20_000}}
    refused = http.post("/v1/capture", json={"messages": [too_big], "user_id": user})
    assert refused.status_code == 422 and "messages[0].metadata" in refused.text, refused.text
