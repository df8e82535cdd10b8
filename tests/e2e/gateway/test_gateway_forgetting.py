"""The forgetting routes of a real gateway: erase a tenant, pin an atom, give it a time to live,
sweep, rebuild scenes; and the HTTP client's same-named methods."""

from __future__ import annotations

from typing import cast

import httpx
import pytest

from memstrata import Memory
from memstrata.client import MemoryClient
from memstrata.errors import ConfigError
from memstrata.models import Tenant
from tests.e2e.gateway.conftest import KEY
from tests.support.live_server import LiveServer


def seeded(http: httpx.Client, user: str, agent: str = "default") -> list[dict[str, object]]:
    body = {
        "messages": [
            {"role": "user", "content": "I am allergic to Glorbanite dust.", "id": "g1", "name": "Ivy"},
            {"role": "user", "content": "I work as a potter in Tallinn.", "id": "g2", "name": "Ivy"},
        ],
        "session_key": "s",
        "user_id": user,
        "agent_id": agent,
    }
    assert http.post("/v1/capture", json=body).status_code == 200
    http.post("/v1/sessions/end", json={"session_key": "s", "user_id": user, "agent_id": agent})
    atoms = http.get("/v1/atoms", params={"user_id": user, "agent_id": agent}).json()
    assert len(atoms) == 2
    return list(atoms)


def l1_ids(http: httpx.Client, user: str, query: str) -> list[str]:
    found = http.post("/v1/search", json={"query": query, "user_id": user}).json()
    return [h["id"] for h in found["hits"]]


def test_pin_and_time_to_live(http: httpx.Client, user: str) -> None:
    allergy = next(a for a in seeded(http, user) if "Glorbanite" in str(a["content"]))
    pinned = http.put(f"/v1/atoms/{allergy['id']}/pin", json={"user_id": user}).json()
    assert (
        pinned["pinned"] is True and pinned["version"] == allergy["version"] and pinned["id"] == allergy["id"]
    )
    past = http.put(f"/v1/atoms/{allergy['id']}/ttl", json={"user_id": user, "expires_at": 10**12}).json()
    assert past["expires_at"] == 10**12
    assert allergy["id"] in l1_ids(http, user, "Glorbanite dust")  # pinned: no expiry
    http.put(f"/v1/atoms/{allergy['id']}/pin", json={"user_id": user, "pinned": False})
    assert allergy["id"] not in l1_ids(http, user, "Glorbanite dust")
    cleared = http.put(f"/v1/atoms/{allergy['id']}/ttl", json={"user_id": user}).json()
    assert cleared["expires_at"] is None and allergy["id"] in l1_ids(http, user, "Glorbanite dust")
    both = http.put(
        f"/v1/atoms/{allergy['id']}/ttl", json={"user_id": user, "expires_at": 5, "ttl_seconds": 5}
    )
    assert both.status_code == 422 and both.json()["error"]["field"] == "ttl_seconds"
    assert http.put("/v1/atoms/nope/pin", json={"user_id": user}).status_code == 404


def test_sweep_and_rebuild(http: httpx.Client, user: str) -> None:
    atoms = seeded(http, user)
    http.put(f"/v1/atoms/{atoms[0]['id']}/ttl", json={"user_id": user, "expires_at": 10**12})
    swept = http.post("/v1/pipeline/sweep", json={}).json()
    assert swept["expired"] >= 1 and {"user_id": user, "agent_id": "default"} in swept["tenants"]
    assert http.get(f"/v1/atoms/{atoms[0]['id']}", params={"user_id": user}).status_code == 404
    entries = http.post("/v1/scenes/rebuild", json={"user_id": user}).json()
    assert [i for e in entries for i in e["atom_ids"]] == [atoms[1]["id"]]
    assert http.get("/v1/status").json()["last_sweep"] == swept["at"]


def test_forget_erases_the_tenant_and_answers_what_it_removed(http: httpx.Client, user: str) -> None:
    seeded(http, user)
    seeded(http, user, "other")
    one = http.delete("/v1/tenants", params={"user_id": user, "agent_id": "other"}).json()
    assert one["tenants"] == [{"user_id": user, "agent_id": "other"}] and one["erased"]["messages"] == 2
    assert http.get("/v1/messages", params={"user_id": user}).json() != []
    every = http.delete("/v1/tenants", params={"user_id": user}).json()
    assert every["tenants"] == [{"user_id": user, "agent_id": "default"}]
    assert every["erased"]["atoms"] == 2 and every["reclaimed"] is True
    assert http.get("/v1/messages", params={"user_id": user}).json() == []
    assert l1_ids(http, user, "Glorbanite dust") == []
    assert http.delete("/v1/tenants").status_code == 422  # the user is never implied


def test_the_client_forgets_pins_and_refuses_local_folders(server: LiveServer, user: str) -> None:
    with Memory.open(server.url, api_key=KEY) as mem:
        assert isinstance(cast(object, mem), MemoryClient)
        mem.capture(
            [{"role": "user", "content": "I collect Wobblestone coins.", "name": "Ivy"}], user_id=user
        )
        mem.end_session(user_id=user)
        (atom,) = mem.atoms(user_id=user)
        assert mem.pin_atom(atom.id, user_id=user).pinned
        assert mem.set_atom_ttl(atom.id, ttl_seconds=60, user_id=user).expires_at is not None
        report = mem.forget(user_id=user)
        assert report.tenants == (Tenant(user),) and report.erased.atoms == 1
        with pytest.raises(ConfigError, match="server's host"):
            mem.export("/tmp/anything")
        with pytest.raises(ConfigError, match="server's host"):
            mem.import_export("/tmp/anything")
