"""One rule wherever a request names a tenant (issue 48, item 8): a scoped key naming another
tenant gets 403, in the query string of a route that reads its body, in a header of the other API
family, in a TDAM team and user naming two tenants. Each of these had answered the key's own data
(``docs/http-api.md`` says that never happens)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.security.conftest import Secured, bobs_holdings

# (method, path, query, headers, JSON body): bob's key naming alice.
CASES: list[tuple[str, str, dict[str, str], dict[str, str], dict[str, Any] | None]] = [
    ("POST", "/v1/search", {"user_id": "alice"}, {}, {"query": "cello"}),
    ("POST", "/v1/capture", {"user_id": "alice"}, {}, {"messages": [{"role": "user", "content": "hi"}]}),
    ("GET", "/v1/messages", {"user_id": "bob"}, {"x-memstrata-user-id": "alice"}, None),
    ("POST", "/v3/core/read", {}, {}, {"team_id": "bob", "user_id": "alice"}),
    ("POST", "/v3/atomic/query", {}, {}, {"team_id": "bob", "user_id": "alice"}),
    ("GET", "/v1/messages", {}, {"x-tdai-user-id": "alice"}, None),
    ("POST", "/v1/search", {}, {"x-tdai-team-id": "alice"}, {"query": "cello"}),
    ("POST", "/v1/recall", {}, {"x-tdai-user-id": "alice"}, {"query": "cello"}),
    ("GET", "/v1/persona", {"team_id": "alice"}, {}, None),
    ("POST", "/v3/core/read", {}, {"x-memstrata-user-id": "alice"}, {}),
    ("POST", "/v3/core/read", {"user_id": "alice"}, {}, {}),
    ("DELETE", "/v1/tenants", {"user_id": "bob"}, {"x-tdai-user-id": "alice"}, None),
]


@pytest.mark.parametrize(("method", "path", "query", "headers", "body"), CASES)
def test_bobs_key_naming_alice_anywhere_is_a_403(
    secured: Secured,
    method: str,
    path: str,
    query: dict[str, str],
    headers: dict[str, str],
    body: dict[str, Any] | None,
) -> None:
    with secured.client(secured.bob) as bob, secured.admin() as admin:
        before = bobs_holdings(admin)
        answer = bob.request(method, path, params=query, headers=headers, json=body)
        assert answer.status_code == 403, answer.text
        assert "bob" not in answer.text.lower().replace("bob's agent", "")  # nothing of bob's data
        assert bobs_holdings(admin) == before
        assert admin.get("/v1/messages", params={"user_id": "alice"}).json() == []


def test_naming_its_own_tenant_everywhere_is_fine(secured: Secured) -> None:
    headers = {"x-memstrata-user-id": "bob", "x-tdai-user-id": "bob", "x-tdai-team-id": "default"}
    with secured.client(secured.bob) as bob:
        found = bob.get("/v1/messages", params={"user_id": "bob"}, headers=headers)
        assert found.status_code == 200 and found.json(), found.text
        tdam = bob.post("/v3/core/read", json={"team_id": "bob", "user_id": "bob"})
        assert tdam.status_code == 200, tdam.text
        searched = bob.post("/v1/search", params={"user_id": "bob"}, json={"query": "cello"})
        assert searched.status_code == 200, searched.text


def test_the_admin_key_may_name_anyone(secured: Secured) -> None:
    with secured.admin() as admin:
        answer = admin.get("/v1/messages", params={"user_id": "bob"}, headers={"x-tdai-user-id": "alice"})
        assert answer.status_code == 200
