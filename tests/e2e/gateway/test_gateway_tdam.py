"""TencentDB-Agent-Memory compatibility: one test per route, written from TDAM's public sources
(TencentCloud/TencentDB-Agent-Memory). Each test names the file its shapes come from and reads
the answer the way TDAM's own clients do."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.live_server import LiveServer

# What TDAM's Hermes client (MemoryCore/hermes-plugin/memory/memory_tencentdb/client.py) sends
# with every request: a bearer token and the service id.
SERVICE = {"x-tdai-service-id": "default"}


@pytest.fixture
def tdam(server: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={**server.headers(), **SERVICE}, timeout=30)


def v3(tdam: httpx.Client, route: str, user: str, **body: Any) -> dict[str, Any]:
    """A v3 call with TDAM's tenant fields (team_id "default" counts as no team)."""
    r = tdam.post(route, json={"team_id": "default", "agent_id": "default", "user_id": user, **body})
    out: dict[str, Any] = r.json()
    assert set(out) >= {"code", "message", "request_id"}, out  # TDAM's envelope (v2-router.ts)
    return out


def added(tdam: httpx.Client, user: str, *texts: str, session: str = "sess-1") -> list[str]:
    messages = [
        {"role": "user", "content": t, "timestamp": f"2026-03-0{i + 1}T10:00:00Z"}
        for i, t in enumerate(texts)
    ]
    out = v3(tdam, "/v3/conversation/add", user, session_id=session, messages=messages)
    assert out["code"] == 0
    return list(out["data"]["accepted_ids"])


def with_atoms(tdam: httpx.Client, user: str) -> list[dict[str, Any]]:
    added(tdam, user, "I adopted a dog named Biscuit.", "I work as a nurse in Lisbon.")
    assert tdam.post("/session/end", json={"session_key": "sess-1", "user_id": user}).json() == {
        "flushed": True
    }
    items: list[dict[str, Any]] = v3(tdam, "/v3/atomic/query", user)["data"]["items"]
    assert items
    return items


# --- v1 (MemoryCore/src/gateway/server.ts handlers, types.ts fields) -----------------------------


def test_v1_health_is_open_and_has_tdam_fields(server: LiveServer) -> None:
    body = httpx.get(server.url + "/health").json()  # server.ts handleHealth: no auth
    assert body["status"] in ("ok", "degraded") and {"version", "uptime", "stores"} <= set(body)
    assert set(body["stores"]) == {"vectorStore", "embeddingService"}


def test_v1_recall(tdam: httpx.Client, user: str) -> None:
    with_atoms(tdam, user)
    # The query shares the atom's words: this server's test embedder hashes words into 64
    # dimensions, so a paraphrase's cosine is chance (the bundled model gives "what is my dog
    # called?" 0.62 here); this test is about TDAM's response, not paraphrase.
    body = tdam.post(
        "/recall", json={"query": "what is my dog's name?", "session_key": "s", "user_id": user}
    ).json()
    # types.ts RecallResponse: context, strategy, memory_count, code, message, retryable
    assert "Biscuit" in body["context"] and body["code"] == 0 and body["memory_count"] >= 1
    missing = tdam.post("/recall", json={"query": "x"})
    assert missing.status_code == 400 and "session_key" in missing.json()["error"]


def test_v1_capture(tdam: httpx.Client, user: str) -> None:
    body = {
        "user_content": "I like green tea.",
        "assistant_content": "Green tea it is, then.",
        "session_key": "c",
        "user_id": user,
    }
    first = tdam.post("/capture", json=body).json()
    again = tdam.post("/capture", json=body).json()
    # types.ts CaptureResponse: l0_recorded, scheduler_notified
    assert first == {"l0_recorded": 2, "scheduler_notified": True}
    assert again == {"l0_recorded": 0, "scheduler_notified": False}  # the same turn, stored once
    assert tdam.post("/capture", json={**body, "assistant_content": ""}).status_code == 400


def test_v1_search_memories(tdam: httpx.Client, user: str) -> None:
    with_atoms(tdam, user)
    body = tdam.post("/search/memories", json={"query": "nurse", "limit": 3, "user_id": user}).json()
    # types.ts MemorySearchResponse: results (text), total, strategy
    assert "nurse" in body["results"] and body["total"] >= 1 and body["strategy"]


def test_v1_search_conversations(tdam: httpx.Client, user: str) -> None:
    added(tdam, user, "Our wedding is in June.", session="wed")
    body = tdam.post(
        "/search/conversations", json={"query": "wedding", "session_key": "wed", "user_id": user}
    ).json()
    assert "wedding" in body["results"] and body["total"] == 1  # ConversationSearchResponse


def test_v1_session_end(tdam: httpx.Client, user: str) -> None:
    added(tdam, user, "I play the cello.", session="end")
    assert tdam.post("/session/end", json={"session_key": "end", "user_id": user}).json() == {"flushed": True}
    assert v3(tdam, "/v3/atomic/count", user)["data"]["total"] >= 1  # extracted at session end


def test_v1_seed(tdam: httpx.Client, user: str) -> None:
    # types.ts SeedRequest: data is format A ({sessions}) or B ([...]); session_key is the fallback.
    data = [
        {
            "conversations": [
                [
                    {"role": "user", "content": "I grew up in Goa."},
                    {"role": "assistant", "content": "Lovely."},
                ]
            ]
        }
    ]
    body = tdam.post("/seed", json={"data": data, "session_key": "seeded", "user_id": user}).json()
    assert body["sessions_processed"] == 1 and body["messages_processed"] == 2 and body["l0_recorded"] == 2
    assert body["rounds_processed"] == 1 and {"duration_ms", "output_dir"} <= set(body)
    bad = tdam.post("/seed", json={"data": {"nope": 1}})
    assert bad.status_code == 400 and "sessions" in bad.json()["error"]


# --- v3 L0 (v2-router.ts handleConversation*, v2-schemas.ts / generated/schemas.ts) -------------


def test_v3_conversation_add(tdam: httpx.Client, user: str) -> None:
    out = v3(
        tdam,
        "/v3/conversation/add",
        user,
        session_id="s",
        messages=[{"role": "user", "content": "Hello there"}],
    )
    data = out["data"]
    assert data["total_count"] == 1 and data["accepted_versions"] == ["v1"] and len(data["accepted_ids"]) == 1
    empty = v3(tdam, "/v3/conversation/add", user, session_id="s", messages=[])
    assert empty["code"] == 400  # messages: min 1 (generated/schemas.ts)


def test_v3_conversation_query(tdam: httpx.Client, user: str) -> None:
    ids = added(tdam, user, "one message", "two messages", "three messages")
    page = v3(tdam, "/v3/conversation/query", user, session_id="sess-1", limit=2, offset=1)["data"]
    assert page["total"] == 3 and [m["id"] for m in page["messages"]] == ids[1:]
    item = page["messages"][0]
    assert {"id", "session_id", "user_id", "agent_id", "role", "content", "timestamp"} <= set(item)


def test_v3_conversation_search_answers_messages_and_the_items_hermes_reads(
    tdam: httpx.Client, user: str
) -> None:
    added(tdam, user, "The concert is on Friday.")
    result = v3(tdam, "/v3/conversation/search", user, query="concert", limit=5)
    # v2-router.ts answers data.messages; the Hermes plugin (__init__.py) reads data.items.
    hermes_reads = result.get("data", {}).get("items", [])
    assert [m["content"] for m in hermes_reads] == ["The concert is on Friday."]
    assert result["data"]["messages"] == hermes_reads and "score" in hermes_reads[0]


def test_v3_conversation_delete(tdam: httpx.Client, user: str) -> None:
    ids = added(tdam, user, "delete me", "keep me")
    assert v3(tdam, "/v3/conversation/delete", user, message_ids=[ids[0]])["data"] == {"deleted_count": 1}
    assert v3(tdam, "/v3/conversation/delete", user, session_id="sess-1")["data"] == {"deleted_count": 1}
    assert v3(tdam, "/v3/conversation/delete", user)["code"] == 400  # neither ids nor sessions


def test_v3_conversation_count(tdam: httpx.Client, user: str) -> None:
    added(tdam, user, "a", "b")
    added(tdam, user, "c", session="other")
    assert v3(tdam, "/v3/conversation/count", user)["data"] == {"total": 3}
    assert v3(tdam, "/v3/conversation/count", user, session_id="other")["data"] == {"total": 1}
    window = v3(tdam, "/v3/conversation/count", user, time_start="2026-03-02T00:00:00Z")
    assert window["data"] == {"total": 1}  # only b is on or after 2 March


# --- v3 L1 (v2-router.ts handleAtomic*) ------------------------------------------------------------


def test_v3_atomic_update(tdam: httpx.Client, user: str) -> None:
    note = with_atoms(tdam, user)[0]
    out = v3(
        tdam, "/v3/atomic/update", user, id=note["id"], content="User works as a surgeon.", background="work"
    )
    assert (
        out["code"] == 0 and out["data"]["version"] == f"v{note['version'] + 1}" and out["data"]["updated_at"]
    )
    again = v3(tdam, "/v3/atomic/update", user, id=note["id"], content="User works as a paramedic.")
    assert again["code"] == 0  # TDAM ids name the note: the old id edits its current version
    assert v3(tdam, "/v3/atomic/update", user, id="nope", content="x")["code"] == 404


def test_v3_atomic_query(tdam: httpx.Client, user: str) -> None:
    items = with_atoms(tdam, user)
    assert {"id", "type", "content", "version", "created_at", "updated_at"} <= set(items[0])
    page = v3(tdam, "/v3/atomic/query", user, limit=1, offset=0)["data"]
    assert page["total"] == len(items) and len(page["items"]) == 1


def test_v3_atomic_search(tdam: httpx.Client, user: str) -> None:
    with_atoms(tdam, user)
    result = v3(tdam, "/v3/atomic/search", user, query="dog Biscuit", limit=5)
    items = result.get("data", {}).get("items", [])  # as the Hermes plugin reads it
    assert any("Biscuit" in i["content"] for i in items) and all("score" in i for i in items)
    assert v3(tdam, "/v3/atomic/search", user, query="dog", type="nonsense")["code"] == 400


def test_v3_atomic_delete(tdam: httpx.Client, user: str) -> None:
    items = with_atoms(tdam, user)
    out = v3(tdam, "/v3/atomic/delete", user, ids=[items[0]["id"], "missing"])
    assert out["data"] == {"deleted_count": 1}
    assert v3(tdam, "/v3/atomic/delete", user, ids=[])["code"] == 400


def test_v3_atomic_count(tdam: httpx.Client, user: str) -> None:
    items = with_atoms(tdam, user)
    assert v3(tdam, "/v3/atomic/count", user)["data"] == {"total": len(items)}


# --- v3 L2 (v2-router.ts handleScenario*; safePath in v2-schemas.ts) ---------------------------------


def scene(tdam: httpx.Client, server: LiveServer, user: str) -> None:
    httpx.put(
        server.url + "/v1/scenes/pets.md",
        json={"content": "Biscuit is a dog.", "summary": "pets", "user_id": user},
        headers=server.headers(),
    ).raise_for_status()


def test_v3_scenario_ls(tdam: httpx.Client, server: LiveServer, user: str) -> None:
    scene(tdam, server, user)
    data = v3(tdam, "/v3/scenario/ls", user)["data"]
    assert (
        data["total"] == 1
        and data["entries"][0]["path"] == "pets.md"
        and data["entries"][0]["summary"] == "pets"
    )
    assert v3(tdam, "/v3/scenario/ls", user, path_prefix="zzz")["data"]["total"] == 0


def test_v3_scenario_read(tdam: httpx.Client, server: LiveServer, user: str) -> None:
    scene(tdam, server, user)
    data = v3(tdam, "/v3/scenario/read", user, path="pets.md")["data"]
    assert data["content"].startswith("-----META-START-----") and "Biscuit is a dog." in data["content"]
    assert v3(tdam, "/v3/scenario/read", user, path="none.md")["data"]["content"] is None  # 200, not 404
    assert v3(tdam, "/v3/scenario/read", user, path="../persona.md")["code"] == 400  # safePath


def test_v3_scenario_write(tdam: httpx.Client, server: LiveServer, user: str) -> None:
    scene(tdam, server, user)
    out = v3(
        tdam, "/v3/scenario/write", user, path="pets.md", content="Biscuit and Miso.", summary="two pets"
    )
    assert out["code"] == 0 and out["data"]["path"] == "pets.md"
    assert "Biscuit and Miso." in v3(tdam, "/v3/scenario/read", user, path="pets.md")["data"]["content"]
    assert v3(tdam, "/v3/scenario/write", user, path="new.md", content="x")["code"] == 404  # no create


def test_v3_scenario_rm(tdam: httpx.Client, server: LiveServer, user: str) -> None:
    scene(tdam, server, user)
    out = v3(tdam, "/v3/scenario/rm", user, path="pets.md")
    assert out["code"] == 0 and "data" not in out  # TDAM answers an envelope without data
    assert v3(tdam, "/v3/scenario/count", user)["data"] == {"total": 0}


def test_v3_scenario_count(tdam: httpx.Client, server: LiveServer, user: str) -> None:
    scene(tdam, server, user)
    assert v3(tdam, "/v3/scenario/count", user)["data"] == {"total": 1}
    assert v3(tdam, "/v3/scenario/count", user, path_prefix="pe")["data"] == {"total": 1}


# --- v3 L3 (v2-router.ts handleCore*) -------------------------------------------------------------


def test_v3_core_write_and_read(tdam: httpx.Client, user: str) -> None:
    assert v3(tdam, "/v3/core/read", user)["data"]["content"] is None  # none yet: 200, null
    written = v3(tdam, "/v3/core/write", user, content="# Ann\nLoves tea.")
    assert written["code"] == 0 and written["data"]["updated_at"]
    content = v3(tdam, "/v3/core/read", user).get("data", {}).get("content", "")  # as Hermes reads it
    assert "Loves tea." in content


def test_v3_core_count(tdam: httpx.Client, user: str) -> None:
    assert v3(tdam, "/v3/core/count", user)["data"] == {"total": 0}
    v3(tdam, "/v3/core/write", user, content="A persona.")
    assert v3(tdam, "/v3/core/count", user)["data"] == {"total": 1}


# --- v2 -------------------------------------------------------------------------------------------


def test_v2_pipeline_status(tdam: httpx.Client, user: str) -> None:
    added(tdam, user, "Something to extract later.", session="pending")
    data = tdam.get("/v2/pipeline/status").json()["data"]
    assert set(data) == {"l1", "l2", "l3"}
    assert set(data["l1"]) == {"queued", "running", "queued_sessions", "running_sessions", "idle"}
    tdam.post("/session/end", json={"session_key": "pending", "user_id": user})
    assert "pending" not in tdam.post("/v2/pipeline/status", json={}).json()["data"]["l1"]["queued_sessions"]


def test_v2_data_plane_aliases_are_served(tdam: httpx.Client, user: str) -> None:
    # v2-router.ts mounts the data plane at /v2 as well as /v3 (counts at /v3 only).
    out = tdam.post(
        "/v2/conversation/add", json={"user_id": user, "messages": [{"role": "user", "content": "hi there"}]}
    )
    assert out.json()["code"] == 0
    assert tdam.post("/v2/conversation/count", json={}).status_code == 404


def test_tenant_headers_and_team_mapping(tdam: httpx.Client, user: str) -> None:
    # resolveIsolation (v2-schemas.ts): body fields, else x-tdai-* headers. A team maps to memstrata's user.
    tdam.post(
        "/v3/conversation/add",
        json={"messages": [{"role": "user", "content": "team note"}]},
        headers={"x-tdai-team-id": user},
    )
    assert v3(tdam, "/v3/conversation/count", user)["data"]["total"] == 1
    as_team = tdam.post("/v3/conversation/count", json={"team_id": user, "user_id": "someone"}).json()
    assert as_team["data"]["total"] == 1
