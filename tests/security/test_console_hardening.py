"""The console under hostile input (issue 48, items 6 and 7): a cookie or CSRF token holding a
byte that is not ASCII is a 4xx, not a 500; an export's file name is encoded per RFC 6266 (a
Chinese user id made the header unencodable: 500); a key's logins cannot push out another key's
sessions; failed logins from one client are slowed, while the rightful key still gets in."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from memstrata.gateway.access import Principal
from memstrata.gateway.console.session import Sessions
from tests.security.conftest import ADMIN_KEY
from tests.support.live_server import LiveServer

CHINESE_USER = "用户"


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    home = Path(tmp_path_factory.mktemp("console-hardening")) / "data"
    with LiveServer(home, api_key=ADMIN_KEY) as live:
        with httpx.Client(base_url=live.url, headers=live.headers(), timeout=30) as admin:
            said = [{"role": "user", "content": "我喜欢喝茶。"}]
            answer = admin.post("/v1/capture", json={"messages": said, "user_id": CHINESE_USER})
            assert answer.status_code == 200, answer.text
        yield live


@contextmanager
def _logged_in(live: LiveServer, key: str = ADMIN_KEY) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.url, timeout=30) as client:
        answer = client.post("/ui/login", data={"key": key, "next": "/ui/"})
        assert answer.status_code == 303, answer.text
        yield client


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF token on the page"
    return found.group(1)


def test_a_cookie_holding_a_byte_that_is_not_ascii_is_no_session(console: LiveServer) -> None:
    """``memstrata_console=abc.\\xff`` made ``hmac.compare_digest`` raise (500)."""
    raw = [(b"cookie", b"memstrata_console=abc.\xff")]
    with httpx.Client(base_url=console.url, timeout=30) as client:
        page = client.get("/ui/", headers=raw)
        assert page.status_code == 303 and page.headers["location"].startswith("/ui/login"), page.text
        posted = client.post("/ui/logout", headers=raw, data={"csrf": "x"})
        assert 300 <= posted.status_code < 500, posted.text


def test_a_csrf_token_holding_a_byte_that_is_not_ascii_is_a_403(console: LiveServer) -> None:
    with _logged_in(console) as client:
        home = client.get("/ui/")
        assert home.status_code == 200
        body = b"csrf=" + _csrf(home.text).encode()[:-1] + b"%FF"
        headers = {"content-type": "application/x-www-form-urlencoded"}
        refused = client.post("/ui/logout", content=body, headers=headers)
        assert refused.status_code == 403, refused.text
        assert client.get("/ui/").status_code == 200  # still logged in: nothing happened


def test_the_export_of_a_chinese_user_id_names_its_file_per_rfc_6266(console: LiveServer) -> None:
    with _logged_in(console) as client:
        answer = client.get(f"/ui/t/{quote(CHINESE_USER)}/export")
        assert answer.status_code == 200, answer.text
        disposition = answer.headers["content-disposition"]
        assert disposition.isascii()
        expected = quote(f"memstrata-{CHINESE_USER}-default.zip", safe="")
        assert f"filename*=UTF-8''{expected}" in disposition
        assert re.search(r'filename="[ -~]+"', disposition), disposition  # an ASCII fallback
        assert answer.content[:2] == b"PK"


def test_one_keys_logins_never_push_out_another_keys_sessions() -> None:
    """10,050 logins with alice's key evicted the whole table, admin's sessions with it."""
    sessions = Sessions()
    admin = Principal("admin", admin=True, key_id="admin")
    alice = Principal("alice's agent", tenants=(("alice", None),), key_id="k1")
    _, admins = sessions.open(admin)
    _, alices_first = sessions.open(alice)
    for _ in range(500):
        sessions.open(alice)
    assert sessions.find(admins) is not None
    assert sessions.find(alices_first) is None  # her own oldest went
    assert sessions.count(alice) == sessions.per_key


def test_failed_logins_are_slowed_per_client_and_the_rightful_key_still_gets_in(tmp_path: Path) -> None:
    """Bad keys from one client are slowed (429 with Retry-After, the key not even checked);
    a key that worked before gets in at once from the same address, and a key never used yet
    gets in once the wait is over: slowed, never locked out."""
    with (
        LiveServer(tmp_path / "data", api_key=ADMIN_KEY) as live,
        httpx.Client(base_url=live.url, timeout=30) as client,
    ):
        admin = live.headers()
        made = client.post("/v1/keys", json={"tenants": [["alice", None]]}, headers=admin)
        fresh_key = made.json()["secret"]  # made, never used: unknown to the throttle
        answers = [client.post("/ui/login", data={"key": f"guess-{i}"}).status_code for i in range(30)]
        assert answers[:10] == [401] * 10  # a few mistakes cost nothing
        assert 429 in answers, answers
        api = [client.get("/v1/status", headers={"authorization": f"Bearer x{i}"}) for i in range(5)]
        assert {a.status_code for a in api} == {429}  # the API asks the same throttle
        assert int(api[-1].headers["retry-after"]) >= 1
        started = time.monotonic()
        right = client.post("/ui/login", data={"key": ADMIN_KEY, "next": "/ui/"})
        assert right.status_code == 303, right.text  # used before (creating the key): at once
        assert client.get("/v1/status", headers=admin).status_code == 200
        assert time.monotonic() - started < 2
        waited = client.post("/ui/login", data={"key": fresh_key, "next": "/ui/"})
        assert waited.status_code == 429
        time.sleep(int(waited.headers["retry-after"]) + 0.1)
        assert client.post("/ui/login", data={"key": fresh_key, "next": "/ui/"}).status_code == 303
