"""A real gateway with an admin key and two scoped keys (alice's, bob's), and bob's data in every
layer: the state the access tests probe. One server per module; the tests only read, or are
refused, so they share it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.live_server import LiveServer

ADMIN_KEY = "admin-key-0123456789abcdef"


@dataclass(frozen=True)
class Secured:
    server: LiveServer
    alice: str  # a key bound to user alice (every agent)
    bob: str  # a key bound to user bob
    bob_message: str  # ids of bob's records, for routes that take one
    bob_atom: str
    bob_scene: str

    @property
    def url(self) -> str:
        return self.server.url

    def client(self, key: str | None) -> httpx.Client:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def admin(self) -> httpx.Client:
        return self.client(ADMIN_KEY)


def new_key(admin: httpx.Client, user: str, label: str) -> str:
    answer = admin.post("/v1/keys", json={"tenants": [[user, None]], "label": label})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["secret"])


def bobs_holdings(admin: httpx.Client) -> dict[str, object]:
    """Everything of bob's, read with the admin key: a refused request must leave it as it was."""
    q = {"user_id": "bob"}
    return {
        "messages": [m["id"] for m in admin.get("/v1/messages", params=q).json()],
        "atoms": sorted(
            (a["id"], a["content"], a["pinned"]) for a in admin.get("/v1/atoms", params=q).json()
        ),
        "scenes": sorted(
            (s["name"], admin.get(f"/v1/scenes/{s['name']}", params=q).json()["body"])
            for s in admin.get("/v1/scenes", params=q).json()
        ),
        "persona": admin.get("/v1/persona", params=q).json(),
    }


def _seed_bob(admin: httpx.Client) -> tuple[str, str, str]:
    turns = [
        {"role": "user", "content": "I live in Porto and I play the cello every evening.", "id": "bob-1"},
        {"role": "assistant", "content": "Lovely: the cello in Porto.", "id": "bob-2"},
        {"role": "user", "content": "My sister Carla works as a pilot for an airline.", "id": "bob-3"},
    ]
    done = admin.post("/v1/capture", json={"messages": turns, "session_key": "s1", "user_id": "bob"})
    assert done.status_code == 200, done.text
    assert admin.post("/v1/pipeline/run-all", json={}).status_code == 200
    scene = admin.put("/v1/scenes/bob-private.md", json={"content": "Bob's private notes.", "user_id": "bob"})
    assert scene.status_code == 200, scene.text
    persona = admin.put("/v1/persona", json={"body": "Bob plays the cello.", "user_id": "bob"})
    assert persona.status_code == 200, persona.text
    atoms = admin.get("/v1/atoms", params={"user_id": "bob"}).json()
    assert atoms, "the pipeline extracted no atom for bob"
    return "bob-1", atoms[0]["id"], "bob-private.md"


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    home = Path(tmp_path_factory.mktemp("secured")) / "data"
    with (
        LiveServer(home, api_key=ADMIN_KEY) as live,
        httpx.Client(
            base_url=live.url, headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=60
        ) as admin,
    ):
        message, atom, scene = _seed_bob(admin)
        yield Secured(
            live,
            new_key(admin, "alice", "alice's agent"),
            new_key(admin, "bob", "bob's agent"),
            message,
            atom,
            scene,
        )
