"""A key scoped to alice cannot read, change or delete bob's data through any route, whatever
spelling of the tenant the request uses (body, query, header); the admin key can; cross-tenant
routes are the admin's. Every operation of the served schema is in one of the tables below, so a
new route cannot be left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.security.conftest import ADMIN_KEY, Secured, bobs_holdings


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # {message}, {atom}, {scene}: bob's records; {backup}: a backup id
    body: dict[str, Any] | None = None  # None: the tenant goes in the query string
    tdam: bool = False
    query_only: bool = False  # the tenant is taken from the query alone (never from headers)

    @property
    def key(self) -> tuple[str, str]:
        names = {"message": "{message_id}", "atom": "{atom_id}", "scene": "{path}", "backup": "{backup_id}"}
        return self.method, self.path.format(**names)


MSG = [{"role": "user", "content": "I moved to Lisbon.", "id": "alice-probe"}]
NATIVE = [
    Route("POST", "/v1/capture", {"messages": MSG}),
    Route("POST", "/v1/remember", {"text": "Alice plays the cello."}),
    Route("POST", "/v1/recall", {"query": "cello"}),
    Route("POST", "/v1/turns/before-prompt", {"prompt": "cello?"}),
    Route("POST", "/v1/turns/committed", {"messages": MSG}),
    Route("POST", "/v1/sessions/end", {"session_key": "s1"}),
    Route("POST", "/v1/search", {"query": "cello", "layers": ["L0", "L1"]}),
    Route("POST", "/v1/search/conversations", {"query": "cello"}),
    Route("GET", "/v1/messages"),
    Route("GET", "/v1/messages/{message}"),
    Route("POST", "/v1/messages/delete", {"ids": ["bob-1"], "session_keys": ["s1"]}),
    Route("GET", "/v1/counts"),
    Route("GET", "/v1/atoms"),
    Route("GET", "/v1/atoms/{atom}"),
    Route("PATCH", "/v1/atoms/{atom}", {"content": "Bob hates the cello."}),
    Route("POST", "/v1/atoms/delete", {"ids": ["{atom}"]}),
    Route("DELETE", "/v1/tenants", query_only=True),
    Route("PUT", "/v1/atoms/{atom}/pin", {"pinned": True}),
    Route("PUT", "/v1/atoms/{atom}/ttl", {"ttl_seconds": 1}),
    Route("POST", "/v1/scenes/rebuild", {}),
    Route("GET", "/v1/scenes"),
    Route("GET", "/v1/scenes/{scene}"),
    Route("PUT", "/v1/scenes/{scene}", {"content": "overwritten"}),
    Route("DELETE", "/v1/scenes/{scene}"),
    Route("GET", "/v1/scenes/{scene}/backups"),
    Route("GET", "/v1/scenes/{scene}/backups/{backup}"),
    Route("GET", "/v1/persona"),
    Route("PUT", "/v1/persona", {"body": "overwritten"}),
    Route("GET", "/v1/persona/backups"),
    Route("GET", "/v1/persona/backups/{backup}"),
    Route("POST", "/v1/persona/request", {}),
    Route(
        "POST",
        "/v1/import",
        {
            "data": {
                "sessions": [
                    {
                        "sessionKey": "x",
                        "conversations": [[{"role": "user", "content": "hi there, I like tea"}]],
                    }
                ]
            }
        },
    ),
]
_TDAM_V3: list[tuple[str, dict[str, Any]]] = [
    ("conversation/add", {"messages": [{"role": "user", "content": "I moved to Lisbon."}]}),
    ("conversation/query", {}),
    ("conversation/search", {"query": "cello"}),
    ("conversation/delete", {"session_ids": ["s1"]}),
    ("atomic/update", {"id": "{atom}", "content": "Bob hates the cello."}),
    ("atomic/query", {}),
    ("atomic/search", {"query": "cello"}),
    ("atomic/delete", {"ids": ["{atom}"]}),
    ("scenario/ls", {}),
    ("scenario/read", {"path": "scene_blocks/{scene}"}),
    ("scenario/write", {"path": "scene_blocks/{scene}", "content": "overwritten"}),
    ("scenario/rm", {"path": "scene_blocks/{scene}"}),
    ("core/read", {}),
    ("core/write", {"content": "overwritten"}),
]
_COUNTS = ["conversation/count", "atomic/count", "scenario/count", "core/count"]
TDAM = [
    Route("POST", "/recall", {"query": "cello", "session_key": "s1"}, tdam=True),
    Route(
        "POST",
        "/capture",
        {"user_content": "hi", "assistant_content": "hello", "session_key": "s1"},
        tdam=True,
    ),
    Route("POST", "/search/memories", {"query": "cello"}, tdam=True),
    Route("POST", "/search/conversations", {"query": "cello"}, tdam=True),
    Route("POST", "/session/end", {"session_key": "s1"}, tdam=True),
    Route(
        "POST",
        "/seed",
        {
            "data": {
                "sessions": [
                    {
                        "sessionKey": "x",
                        "conversations": [[{"role": "user", "content": "hi there, I like tea"}]],
                    }
                ]
            }
        },
        tdam=True,
    ),
    *(Route("POST", f"/{v}/{name}", body, tdam=True) for name, body in _TDAM_V3 for v in ("v3", "v2")),
    *(Route("POST", f"/v3/{name}", {}, tdam=True) for name in _COUNTS),
]
ADMIN_ONLY = [
    ("GET", "/v1/status"),
    ("GET", "/v1/tenants"),
    ("POST", "/v1/pipeline/run"),
    ("POST", "/v1/pipeline/run-all"),
    ("POST", "/v1/pipeline/sweep"),
    ("POST", "/v1/repair"),
    ("POST", "/v1/reindex"),
    ("GET", "/v1/keys"),
    ("POST", "/v1/keys"),
    ("DELETE", "/v1/keys/{key_id}"),
    ("POST", "/v1/keys/verify"),
    ("GET", "/v2/pipeline/status"),
    ("POST", "/v2/pipeline/status"),
]
OPEN = [("GET", "/v1/health"), ("GET", "/health")]
_ADMIN_BODIES: dict[str, Any] = {
    "/v1/keys": {"tenants": [["alice", None]]},
    "/v1/keys/verify": {"token": "x"},
}
# Every place a request can name a tenant, on every route, read there or not (issue 48: a query
# parameter on a route reading its body, or the other API family's header, had answered the key's
# own data instead of 403).
SPELLINGS = {
    "native": ["field", "header", "query", "x-tdai-user-id", "x-tdai-team-id"],
    "tdam": ["user_id", "team_id", "x-tdai-user-id", "x-tdai-team-id", "header", "query"],
}


def _fill(value: Any, s: Secured) -> Any:
    if isinstance(value, str):
        return value.format(message=s.bob_message, atom=s.bob_atom, scene=s.bob_scene, backup="scenes-1")
    if isinstance(value, list):
        return [_fill(v, s) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, s) for k, v in value.items()}
    return value


def send(
    client: httpx.Client, route: Route, s: Secured, spelling: str | None, user: str = "bob"
) -> httpx.Response:
    """``route`` naming ``user`` in the way ``spelling`` says (None: naming no tenant)."""
    body = None if route.body is None else dict(_fill(route.body, s))
    params: dict[str, str] = {}
    headers: dict[str, str] = {}
    if spelling == "query":
        params["user_id"] = user
    elif spelling in ("field", "user_id", "team_id"):
        if body is None:
            params["user_id"] = user
        else:
            body["user_id" if spelling != "team_id" else "team_id"] = user
    elif spelling == "header":
        headers["x-memstrata-user-id"] = user
    elif spelling is not None:
        headers[spelling] = user
    return client.request(route.method, _fill(route.path, s), json=body, params=params, headers=headers)


def spellings(route: Route) -> list[str]:
    found = SPELLINGS["tdam" if route.tdam else "native"]
    return [sp for sp in found if not (route.query_only and (sp == "header" or sp.startswith("x-")))]


def test_every_served_operation_is_probed(secured: Secured) -> None:
    with secured.admin() as admin:
        schema = admin.get("/openapi.json").json()
    served = {(m.upper(), p) for p, ops in schema["paths"].items() for m in ops}
    probed = {r.key for r in NATIVE + TDAM} | set(ADMIN_ONLY) | set(OPEN)
    assert served - probed == set(), "routes without an access test"
    assert probed - served == set(), "the tables name routes that are not served"


@pytest.mark.parametrize("route", NATIVE + TDAM, ids=lambda r: f"{r.method} {r.path}")
def test_alices_key_naming_bob_is_refused(secured: Secured, route: Route) -> None:
    with secured.client(secured.alice) as alice, secured.admin() as admin:
        before = bobs_holdings(admin)
        for spelling in spellings(route):
            answer = send(alice, route, secured, spelling)
            assert answer.status_code == 403, (spelling, answer.text)
            assert "bob" not in answer.text.replace("'bob'", "")  # no data, only the refusal
        assert bobs_holdings(admin) == before


@pytest.mark.parametrize(("method", "path"), ADMIN_ONLY)
def test_cross_tenant_routes_are_the_admins(secured: Secured, method: str, path: str) -> None:
    path = path.replace("{key_id}", "nope")
    body = _ADMIN_BODIES.get(path, {} if method == "POST" else None)
    with secured.client(secured.alice) as alice:
        answer = alice.request(method, path, json=body)
    assert answer.status_code == 403, answer.text
    with secured.admin() as admin:
        assert admin.request(method, path, json=body).status_code in (200, 404)  # 404: no key "nope"


@pytest.mark.parametrize("path", ["/v1/messages", "/v1/atoms"])
def test_all_tenants_is_the_admins(secured: Secured, path: str) -> None:
    with secured.client(secured.alice) as alice:
        assert alice.get(path, params={"all_tenants": "true"}).status_code == 403
    with secured.admin() as admin:
        found = admin.get(path, params={"all_tenants": "true"}).json()
    assert any(r["tenant"]["user_id"] == "bob" for r in found)


def test_alice_naming_nobody_acts_on_alice_and_never_finds_bobs_records(secured: Secured) -> None:
    with secured.client(secured.alice) as alice:
        assert alice.get(f"/v1/messages/{secured.bob_message}").status_code == 404
        assert alice.get(f"/v1/atoms/{secured.bob_atom}").status_code == 404
        assert alice.get(f"/v1/scenes/{secured.bob_scene}").status_code == 404
        hits = alice.post("/v1/search", json={"query": "cello Porto", "layers": ["L0", "L1"]}).json()
        assert hits["hits"] == []
        stored = alice.post(
            "/v1/capture", json={"messages": [{"role": "user", "content": "I drink green tea."}]}
        )
        assert stored.status_code == 200
        assert stored.json()["stored"][0]["tenant"]["user_id"] == "alice"
        assert alice.get("/v1/messages", params={"user_id": "alice"}).status_code == 200


def test_the_admin_key_reaches_bob(secured: Secured) -> None:
    with secured.admin() as admin:
        assert admin.get(f"/v1/atoms/{secured.bob_atom}", params={"user_id": "bob"}).status_code == 200
        assert admin.post("/v3/atomic/query", json={"user_id": "bob"}).json()["data"]["total"] >= 1


def test_bobs_own_key_reaches_bob_by_any_spelling(secured: Secured) -> None:
    with secured.client(secured.bob) as bob:
        for spelling in (None, "field", "header"):
            answer = send(bob, Route("GET", "/v1/atoms/{atom}"), secured, spelling)
            assert answer.status_code == 200, (spelling, answer.text)
        for spelling in (None, "user_id", "team_id", "x-tdai-user-id", "x-tdai-team-id"):
            answer = send(bob, Route("POST", "/v3/atomic/query", {}, tdam=True), secured, spelling)
            assert answer.json()["data"]["total"] >= 1, (spelling, answer.text)


def test_an_unknown_or_malformed_key_is_401(secured: Secured) -> None:
    for token in ("msk_nope_nope", secured.alice + "x", "", ADMIN_KEY[:-1]):
        with secured.client(token or None) as c:
            assert c.get("/v1/persona").status_code == 401
