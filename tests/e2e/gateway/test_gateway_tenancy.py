"""Tenant B can neither read, update nor delete tenant A's data, through any data-plane route
(native and TDAM-compatible), against a real server."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.e2e.gateway.test_gateway_native import seeded


@dataclass(frozen=True)
class World:
    a: str
    b: str
    message_id: str
    atom_id: str
    snapshot: dict[str, Any]


def snapshot(http: httpx.Client, user: str) -> dict[str, Any]:
    p = {"user_id": user}
    return {
        "messages": http.get("/v1/messages", params=p).json(),
        "atoms": http.get("/v1/atoms", params={**p, "include_superseded": "true"}).json(),
        "scenes": http.get("/v1/scenes", params=p).json(),
        "scene": http.get("/v1/scenes/pets.md", params=p).json(),
        "persona": http.get("/v1/persona", params=p).json(),
    }


@pytest.fixture
def world(http: httpx.Client) -> World:
    a, b = f"a-{uuid.uuid4().hex[:8]}", f"b-{uuid.uuid4().hex[:8]}"
    atoms = seeded(http, a)
    http.put("/v1/scenes/pets.md", json={"content": "Biscuit is A's dog.", "user_id": a})
    http.put("/v1/persona", json={"body": "A is a nurse.", "user_id": a})
    message_id = http.get("/v1/messages", params={"user_id": a}).json()[0]["id"]
    return World(a, b, message_id, atoms[0]["id"], snapshot(http, a))


def test_native_reads_of_b_see_nothing_of_a(http: httpx.Client, world: World) -> None:
    b = {"user_id": world.b}
    as_b = {"x-memstrata-user-id": world.b}  # the header form of the tenant
    assert http.get("/v1/messages", params=b).json() == []
    assert http.get("/v1/messages", headers=as_b).json() == []
    assert http.get(f"/v1/messages/{world.message_id}", params=b).status_code == 404
    assert http.get("/v1/atoms", params=b).json() == []
    assert http.get(f"/v1/atoms/{world.atom_id}", headers=as_b).status_code == 404
    assert http.get("/v1/scenes", params=b).json() == []
    assert http.get("/v1/scenes/pets.md", params=b).status_code == 404
    assert http.get("/v1/persona", params=b).json() is None
    assert http.get("/v1/counts", params=b).json() == {"messages": 0, "atoms": 0, "scenes": 0, "persona": 0}
    for path in ("/v1/search", "/v1/search/conversations"):
        assert http.post(path, json={"query": "Biscuit dog nurse", **b}).json()["hits"] == []
    recall = http.post("/v1/recall", json={"query": "Biscuit dog nurse", **b}).json()
    assert "Biscuit" not in recall["prepend_context"] + recall["system_context"]


def test_native_writes_and_deletes_of_b_leave_a_untouched(http: httpx.Client, world: World) -> None:
    b = {"user_id": world.b}
    assert http.patch(f"/v1/atoms/{world.atom_id}", json={"content": "hijacked", **b}).status_code == 404
    assert http.post("/v1/atoms/delete", json={"ids": [world.atom_id], **b}).json()["deleted"] == []
    gone = http.post("/v1/messages/delete", json={"ids": [world.message_id], "session_keys": ["chat-1"], **b})
    assert gone.json()["deleted"] == []
    assert http.delete("/v1/scenes/pets.md", params=b).status_code == 404
    http.put("/v1/scenes/pets.md", json={"content": "B's own pets.", **b})  # B's own scene
    http.put("/v1/persona", json={"body": "B is a pilot.", **b})  # B's own persona
    assert snapshot(http, world.a) == world.snapshot


def test_tdam_routes_of_b_neither_read_nor_change_a(http: httpx.Client, world: World) -> None:
    b = {"user_id": world.b}

    def post(path: str, body: dict[str, Any]) -> Any:
        return http.post(path, json={**b, **body}).json()

    assert post("/v3/conversation/query", {})["data"] == {"messages": [], "total": 0}
    assert post("/v3/conversation/search", {"query": "Biscuit"})["data"]["messages"] == []
    assert post("/v3/conversation/count", {})["data"]["total"] == 0
    assert post("/v3/conversation/delete", {"message_ids": [world.message_id]})["data"]["deleted_count"] == 0
    assert post("/v3/conversation/delete", {"session_ids": ["chat-1"]})["data"]["deleted_count"] == 0
    assert post("/v3/atomic/query", {})["data"] == {"items": [], "total": 0}
    assert post("/v3/atomic/search", {"query": "Biscuit"})["data"]["items"] == []
    assert post("/v3/atomic/count", {})["data"]["total"] == 0
    assert post("/v3/atomic/update", {"id": world.atom_id, "content": "hijacked"})["code"] == 404
    assert post("/v3/atomic/delete", {"ids": [world.atom_id]})["data"]["deleted_count"] == 0
    assert post("/v3/scenario/ls", {})["data"]["entries"] == []
    assert post("/v3/scenario/read", {"path": "pets.md"})["data"]["content"] is None
    assert post("/v3/scenario/write", {"path": "pets.md", "content": "hijacked"})["code"] == 404
    assert post("/v3/scenario/rm", {"path": "pets.md"})["code"] == 0  # B has none: nothing removed
    assert post("/v3/scenario/count", {})["data"]["total"] == 0
    assert post("/v3/core/read", {})["data"]["content"] is None
    assert post("/v3/core/count", {})["data"]["total"] == 0
    assert post("/v3/core/write", {"content": "B's own core"})["code"] == 0
    assert snapshot(http, world.a) == world.snapshot
    # and TDAM's tenant headers reach A only when they name A
    as_a = http.post("/v3/conversation/count", json={}, headers={"x-tdai-user-id": world.a}).json()
    assert as_a["data"]["total"] == len(world.snapshot["messages"])
