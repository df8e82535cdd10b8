"""Every route of the native API, against a real server on loopback."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.live_server import LiveServer

FACTS = [
    "I adopted a dog named Biscuit last week.",
    "I work as a nurse at the Lisbon city hospital.",
    "Please always answer me in short sentences.",
]


def seeded(http: httpx.Client, user: str, session: str = "chat-1") -> list[dict[str, Any]]:
    """Capture a few facts and run L1 on them; returns the tenant's atoms."""
    messages = [{"role": "user", "content": t, "id": f"{session}-{i}"} for i, t in enumerate(FACTS)]
    r = http.post("/v1/capture", json={"messages": messages, "session_key": session, "user_id": user})
    assert r.status_code == 200, r.text
    assert http.post("/v1/sessions/end", json={"session_key": session, "user_id": user}).json() == {
        "ok": True
    }
    atoms = http.get("/v1/atoms", params={"user_id": user}).json()
    assert atoms, "the offline engine extracts atoms from these facts"
    return list(atoms)


NATIVE_ROUTES = {
    ("POST", "/v1/capture"),
    ("POST", "/v1/remember"),
    ("POST", "/v1/recall"),
    ("POST", "/v1/turns/before-prompt"),
    ("POST", "/v1/turns/committed"),
    ("POST", "/v1/sessions/end"),
    ("POST", "/v1/search"),
    ("POST", "/v1/search/conversations"),
    ("GET", "/v1/messages"),
    ("GET", "/v1/messages/{message_id}"),
    ("POST", "/v1/messages/delete"),
    ("GET", "/v1/counts"),
    ("GET", "/v1/atoms"),
    ("GET", "/v1/atoms/{atom_id}"),
    ("PATCH", "/v1/atoms/{atom_id}"),
    ("POST", "/v1/atoms/delete"),
    ("GET", "/v1/scenes"),
    ("GET", "/v1/scenes/{path}"),
    ("PUT", "/v1/scenes/{path}"),
    ("DELETE", "/v1/scenes/{path}"),
    ("GET", "/v1/scenes/{path}/backups"),
    ("GET", "/v1/scenes/{path}/backups/{backup_id}"),
    ("GET", "/v1/persona"),
    ("PUT", "/v1/persona"),
    ("GET", "/v1/persona/backups"),
    ("GET", "/v1/persona/backups/{backup_id}"),
    ("GET", "/v1/health"),
    ("GET", "/v1/status"),
    ("GET", "/v1/tenants"),
    ("POST", "/v1/pipeline/run"),
    ("POST", "/v1/pipeline/run-all"),
    ("POST", "/v1/persona/request"),
    ("POST", "/v1/reindex"),
    ("POST", "/v1/repair"),
    ("POST", "/v1/import"),
    # forgetting: tested in test_gateway_forgetting.py
    ("DELETE", "/v1/tenants"),
    ("PUT", "/v1/atoms/{atom_id}/pin"),
    ("PUT", "/v1/atoms/{atom_id}/ttl"),
    ("POST", "/v1/pipeline/sweep"),
    ("POST", "/v1/scenes/rebuild"),
    # scoped keys: tested in tests/security
    ("GET", "/v1/keys"),
    ("POST", "/v1/keys"),
    ("DELETE", "/v1/keys/{key_id}"),
    ("POST", "/v1/keys/verify"),
}


def test_the_served_native_routes_are_the_ones_tested_here(http: httpx.Client) -> None:
    schema = http.get("/openapi.json").json()
    served = {(m.upper(), p) for p, ops in schema["paths"].items() if p.startswith("/v1/") for m in ops}
    assert served == NATIVE_ROUTES


def test_health_status_and_tenants(http: httpx.Client, user: str) -> None:
    seeded(http, user)
    health = httpx.get(http.base_url.join("/v1/health")).json()  # open without a key
    assert health["status"] in ("ok", "degraded") and health["embedder"] == "hashing-64"
    status = http.get("/v1/status").json()
    assert any(s["tenant"]["user_id"] == user and s["lag"] == 0 for s in status["sessions"])
    assert {"user_id": user, "agent_id": "default"} in http.get("/v1/tenants").json()


def test_capture_is_idempotent_and_lists_messages_in_order(http: httpx.Client, user: str) -> None:
    body = {
        "messages": [
            {"role": "user", "content": "I moved to Porto.", "id": "m1"},
            {"role": "assistant", "content": "Nice city!", "id": "m2"},
            {"role": "user", "content": "/reset", "id": "m3"},
        ],
        "session_key": "s",
        "user_id": user,
    }
    first = http.post("/v1/capture", json=body).json()
    again = http.post("/v1/capture", json=body).json()
    assert [m["id"] for m in first["stored"]] == ["m1", "m2"] and first["dropped"] == ["m3"]
    assert again["stored"] == [] and again["duplicates"] == ["m1", "m2"]
    listed = http.get("/v1/messages", params={"user_id": user, "session_key": "s"}).json()
    assert [m["id"] for m in listed] == ["m1", "m2"]
    page = http.get("/v1/messages", params={"user_id": user, "after_seq": listed[0]["seq"]}).json()
    assert [m["id"] for m in page] == ["m2"]
    assert http.get("/v1/messages/m1", params={"user_id": user}).json()["content"] == "I moved to Porto."
    assert http.get("/v1/messages/nope", params={"user_id": user}).status_code == 404


def test_deleting_messages_by_id_and_by_session(http: httpx.Client, user: str) -> None:
    for session in ("a", "b"):
        msgs = [{"role": "user", "content": f"note {session}{i}", "id": f"{session}{i}"} for i in range(2)]
        http.post("/v1/capture", json={"messages": msgs, "session_key": session, "user_id": user})
    r = http.post("/v1/messages/delete", json={"ids": ["a0"], "session_keys": ["b"], "user_id": user})
    assert sorted(r.json()["deleted"]) == ["a0", "b0", "b1"]
    assert [m["id"] for m in http.get("/v1/messages", params={"user_id": user}).json()] == ["a1"]
    counts = http.get("/v1/counts", params={"user_id": user, "session_key": "a"}).json()
    assert counts["messages"] == 1 and counts["scenes"] == 0 and counts["persona"] == 0


def test_recall_search_and_conversation_search(http: httpx.Client, user: str) -> None:
    seeded(http, user)
    recall = http.post("/v1/recall", json={"query": "what is my dog called?", "user_id": user}).json()
    assert "Biscuit" in recall["prepend_context"] and "<memory-tools-guide>" in recall["system_context"]
    hits = http.post("/v1/search", json={"query": "nurse hospital", "user_id": user}).json()
    assert hits["strategy"] == "hybrid" and any("nurse" in h["content"] for h in hits["hits"])
    assert all(h["layer"] == "L1" for h in hits["hits"])
    raw = http.post("/v1/search/conversations", json={"query": "Biscuit", "user_id": user}).json()
    assert raw["hits"] and all(h["layer"] == "L0" for h in raw["hits"])


def test_atoms_get_update_to_a_new_version_and_delete(http: httpx.Client, user: str) -> None:
    atom = next(a for a in seeded(http, user) if "nurse" in a["content"])
    assert http.get(f"/v1/atoms/{atom['id']}", params={"user_id": user}).json()["id"] == atom["id"]
    r = http.patch(f"/v1/atoms/{atom['id']}", json={"content": "User works as a surgeon.", "user_id": user})
    new = r.json()
    assert r.status_code == 200 and new["id"] != atom["id"] and new["version"] == atom["version"] + 1
    old = http.get(f"/v1/atoms/{atom['id']}", params={"user_id": user}).json()
    assert old["superseded_by"] == new["id"]  # history stays readable
    stale = http.patch(f"/v1/atoms/{atom['id']}", json={"content": "x y z", "user_id": user})
    assert stale.status_code == 409 and stale.json()["error"]["current"] == new["id"]
    followed = http.patch(f"/v1/atoms/{atom['id']}", json={"priority": 90, "follow": True, "user_id": user})
    assert followed.json()["version"] == new["version"] + 1
    current = [a["id"] for a in http.get("/v1/atoms", params={"user_id": user}).json()]
    assert followed.json()["id"] in current and atom["id"] not in current
    deleted = http.post("/v1/atoms/delete", json={"ids": [followed.json()["id"]], "user_id": user}).json()
    assert set(deleted["deleted"]) == {atom["id"], new["id"], followed.json()["id"]}
    history = http.get("/v1/atoms", params={"user_id": user, "include_superseded": "true"}).json()
    assert atom["id"] not in [a["id"] for a in history]


def test_scenes_write_read_list_delete(http: httpx.Client, user: str) -> None:
    body = {"content": "# Pets\n\nBiscuit is a dog.", "summary": "pets and animals", "user_id": user}
    written = http.put("/v1/scenes/pets.md", json=body).json()
    assert written["name"] == "pets.md" and written["summary"] == "pets and animals"
    read = http.get("/v1/scenes/scene_blocks/pets.md", params={"user_id": user}).json()
    assert read["body"] == "# Pets\n\nBiscuit is a dog."
    assert [e["name"] for e in http.get("/v1/scenes", params={"user_id": user}).json()] == ["pets.md"]
    missing = http.put("/v1/scenes/other.md", json={**body, "create": False})
    assert missing.status_code == 404
    bad = http.put("/v1/scenes/..%2Fpersona.md", json=body)
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_path"
    assert http.delete("/v1/scenes/pets.md", params={"user_id": user}).status_code == 200
    assert http.delete("/v1/scenes/pets.md", params={"user_id": user}).status_code == 404
    assert http.get("/v1/scenes/pets.md", params={"user_id": user}).status_code == 404


def test_replacing_or_deleting_a_scene_backs_it_up_and_the_backup_reads_back(
    http: httpx.Client, user: str
) -> None:
    who = {"user_id": user}
    http.put("/v1/scenes/pets.md", json={"content": "# Pets\n\nBiscuit is a dog.", "summary": "pets", **who})
    assert http.get("/v1/scenes/pets.md/backups", params=who).json() == []  # created: nothing replaced
    http.put("/v1/scenes/pets.md", json={"content": "# Pets\n\nBiscuit is a beagle.", **who})
    backups = http.get("/v1/scenes/scene_blocks%2Fpets.md/backups", params=who).json()
    assert len(backups) == 1 and backups[0]["id"] and backups[0]["made_at"] > 0
    old = http.get(f"/v1/scenes/pets.md/backups/{backups[0]['id']}", params=who).json()
    assert old["body"] == "# Pets\n\nBiscuit is a dog." and old["summary"] == "pets"
    assert http.get("/v1/scenes/pets.md", params=who).json()["body"].endswith("beagle.")
    assert http.delete("/v1/scenes/pets.md", params=who).status_code == 200
    after = http.get("/v1/scenes/pets.md/backups", params=who).json()
    assert len(after) == 2 and after[1] == backups[0]  # newest first
    last = http.get(f"/v1/scenes/pets.md/backups/{after[0]['id']}", params=who).json()
    assert last["body"].endswith("beagle.")  # the deleted scene stays readable
    for bad in ("scenes-0", "persona-1", "nope"):
        gone = http.get(f"/v1/scenes/pets.md/backups/{bad}", params=who)
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "not_found"
    other = http.get(f"/v1/scenes/pets.md/backups/{after[0]['id']}", params={"user_id": f"{user}-x"})
    assert other.status_code == 404  # another tenant's backup
    assert http.get("/v1/scenes/..%2Fx.md/backups", params=who).status_code == 422


def test_writing_the_persona_backs_up_the_one_it_replaces(http: httpx.Client, user: str) -> None:
    who = {"user_id": user}
    assert http.get("/v1/persona/backups", params=who).json() == []
    http.put("/v1/persona", json={"body": "# Ann\n\nLikes tea.", **who})
    assert http.get("/v1/persona/backups", params=who).json() == []  # there was none to keep
    http.put("/v1/persona", json={"body": "# Ann\n\nLikes coffee.", **who})
    backups = http.get("/v1/persona/backups", params=who).json()
    assert len(backups) == 1
    old = http.get(f"/v1/persona/backups/{backups[0]['id']}", params=who).json()
    assert old["body"].strip() == "# Ann\n\nLikes tea." and old["updated"] == backups[0]["made_at"]
    assert http.get("/v1/persona/backups/persona-x", params=who).status_code == 404


def test_persona_write_and_read(http: httpx.Client, user: str) -> None:
    assert http.get("/v1/persona", params={"user_id": user}).json() is None
    http.put("/v1/scenes/tea.md", json={"content": "Tea notes.", "summary": "tea", "user_id": user})
    p = http.put("/v1/persona", json={"body": "# Ann\n\nLikes <b>tea</b>.", "user_id": user}).json()
    assert p["body"] == "# Ann\n\nLikes &lt;b>tea&lt;/b>." and "scene_blocks/tea.md" in p["navigation"]
    assert http.get("/v1/persona", params={"user_id": user}).json()["body"] == p["body"]
    assert http.get("/v1/counts", params={"user_id": user}).json()["persona"] == 1


def test_turn_lifecycle_routes(http: httpx.Client, user: str) -> None:
    seeded(http, user)
    before = http.post(
        "/v1/turns/before-prompt",
        json={
            "prompt": "What is my dog named?",
            "session_key": "t",
            "transcript_length": 0,
            "user_id": user,
        },
    ).json()
    assert "Biscuit" in before["prepend_context"]
    polluted = f"{before['prepend_context']}\n\nWhat is my dog named?"
    turn = {"messages": [{"role": "user", "content": polluted}, {"role": "assistant", "content": "Biscuit."}]}
    done = http.post("/v1/turns/committed", json={**turn, "session_key": "t", "user_id": user}).json()
    assert done["method"] == "position" and done["replaced"]
    assert [m["content"] for m in done["stored"]] == ["What is my dog named?", "Biscuit."]


def test_pipeline_control_reindex_and_import(http: httpx.Client, user: str) -> None:
    seed = {
        "sessions": [
            {"sessionKey": "old", "conversations": [[{"role": "user", "content": "I grew up in Goa."}]]}
        ]
    }
    report = http.post("/v1/import", json={"data": seed, "process": True, "user_id": user}).json()
    assert report["stored"] == 1 and report["sessions"] == 1
    assert (report["extracted"], report["failed"]) == (1, 0) and report["atoms"] >= 1
    assert http.get("/v1/counts", params={"user_id": user}).json()["atoms"] >= 1
    assert http.post("/v1/pipeline/run", json={}).json()["runs"] >= 0
    ran = http.post("/v1/pipeline/run-all").json()
    assert set(ran) == {"l1", "upper", "l1_failed", "atoms", "upper_failed"}
    assert (ran["l1"], ran["atoms"], ran["l1_failed"]) == (0, 0, 0)  # the import extracted it all
    assert http.post("/v1/persona/request", json={"reason": "test", "user_id": user}).json() == {"ok": True}
    assert http.post("/v1/reindex").json()["embedded"] >= 0
    assert http.post("/v1/repair").json() == {"repaired": []}  # nothing broken
    bad = http.post("/v1/import", json={"data": {"sessions": [{"conversations": []}]}, "user_id": user})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "sessions[0].sessionKey"


def test_errors_have_one_shape_with_a_request_id(http: httpx.Client, server: LiveServer) -> None:
    r = http.get("/v1/atoms/none", headers={"x-request-id": "trace-42"})
    err = r.json()["error"]
    assert r.status_code == 404 and err["code"] == "not_found" and err["request_id"] == "trace-42"
    assert r.headers["x-request-id"] == "trace-42"
    assert http.get("/v1/nothing-here").json()["error"]["code"] == "not_found"
