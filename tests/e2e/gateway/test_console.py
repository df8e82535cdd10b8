"""The web console over HTTP (no browser): login and its cookie, CSRF, tenancy, every page, and
the curation forms going through the facade. The browser tests (``tests/browser``) click through
the same pages."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memstrata.demo import sample
from memstrata.gateway.access import Principal
from tests.e2e.gateway.conftest import KEY
from tests.support.keyrings import ScopedKeys
from tests.support.live_server import LiveServer

# The gateway tests' key: a LiveServer installs log redaction for its key once per process, and a
# later test checks that key is redacted.
ADMIN_KEY = KEY
MAYA_KEY = "console-maya-key-4567"
OTHER = {
    "sessions": [
        {
            "sessionKey": "chat-li",
            "userId": "li-wei",
            "conversations": [
                [
                    {
                        "id": "li/D1:1",  # LoCoMo's ids hold "/" too
                        "role": "user",
                        "content": "我叫李伟，住在杭州，喜欢喝龙井茶。",
                        "timestamp": "2026-03-01T08:00:00Z",
                    },
                    {
                        "role": "assistant",
                        "content": "很高兴认识你，李伟！",
                        "timestamp": "2026-03-01T08:00:05Z",
                    },
                ]
            ],
        }
    ]
}


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "the page has no CSRF token"
    return found.group(1)


@contextlib.contextmanager
def log_in(base: str, key: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=120) as client:
        reply = client.post("/ui/login", data={"key": key, "next": "/ui/"})
        assert reply.status_code == 303, reply.text
        yield client


@pytest.fixture(scope="module")
def console_with_two_tenants(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A gateway with an admin key and a key scoped to ``maya``, holding the demo conversation
    (maya) and a Chinese one (li-wei), both imported through the console's import form."""
    home = Path(tmp_path_factory.mktemp("console")) / "data"
    with LiveServer(home, api_key=ADMIN_KEY) as live:
        live.app.state.keyring = ScopedKeys(
            ADMIN_KEY, {MAYA_KEY: Principal("maya-key", tenants=(("maya", None),))}
        )
        with log_in(live.url, ADMIN_KEY) as admin:
            token = csrf_of(admin.get("/ui/import").text)
            for name, doc in (("demo.json", sample()), ("li.json", OTHER)):
                files = {"file": (name, json.dumps(doc, ensure_ascii=False).encode(), "application/json")}
                reply = admin.post("/ui/import", data={"csrf": token}, files=files)
                assert reply.status_code == 200, reply.text
        yield live


@pytest.fixture
def admin(console_with_two_tenants: LiveServer) -> Iterator[httpx.Client]:
    with log_in(console_with_two_tenants.url, ADMIN_KEY) as client:
        yield client


@pytest.fixture
def maya_only(console_with_two_tenants: LiveServer) -> Iterator[httpx.Client]:
    with log_in(console_with_two_tenants.url, MAYA_KEY) as client:
        yield client


def first_atom(client: httpx.Client, user: str) -> str:
    found = re.search(rf'href="/ui/t/{user}/atoms/([^"?]+)"', client.get(f"/ui/t/{user}/atoms").text)
    assert found
    return found.group(1)


def test_without_a_session_every_page_goes_to_the_login_form(console_with_two_tenants: LiveServer) -> None:
    with httpx.Client(base_url=console_with_two_tenants.url) as anonymous:
        reply = anonymous.get("/ui/t/maya/atoms")
        assert reply.status_code == 303
        assert reply.headers["location"] == "/ui/login?next=/ui/t/maya/atoms"
        assert anonymous.post("/ui/login", data={"key": "wrong"}).status_code == 401
        assert anonymous.get("/v1/atoms").status_code == 401  # the API still wants its bearer key


def test_the_session_cookie_is_signed_httponly_strict_and_never_the_key(
    console_with_two_tenants: LiveServer,
) -> None:
    with httpx.Client(base_url=console_with_two_tenants.url) as client:
        reply = client.post("/ui/login", data={"key": ADMIN_KEY, "next": "//evil.example/"})
        cookie = reply.headers["set-cookie"]
        assert reply.headers["location"] == "/ui/"  # no open redirect
        assert "HttpOnly" in cookie
        assert "samesite=strict" in cookie.lower()
        assert "Path=/ui" in cookie
        assert ADMIN_KEY not in cookie
        value = client.cookies["memstrata_console"]
        client.cookies.set("memstrata_console", value[:-1] + ("0" if value[-1] != "0" else "1"), path="/ui")
        assert client.get("/ui/").status_code == 303  # a tampered signature is no session


def test_every_page_renders_for_the_admin(admin: httpx.Client) -> None:
    atom = first_atom(admin, "maya")
    scene = re.search(r'href="/ui/t/maya/scenes/([^"]+)"', admin.get("/ui/t/maya").text)
    assert scene
    message = re.search(r'href="/ui/t/maya/messages/([^"?]+)"', admin.get("/ui/t/maya/messages").text)
    assert message
    for path in (
        "/ui/",
        "/ui/status",
        "/ui/import",
        "/ui/t/maya",
        f"/ui/t/maya/scenes/{scene.group(1)}",
        "/ui/t/maya/atoms?type=persona&pinned=false",
        f"/ui/t/maya/atoms/{atom}",
        "/ui/t/maya/messages?since=2026-03-01",
        f"/ui/t/maya/messages/{message.group(1)}",
        "/ui/t/maya/search?q=Lisbon",
        "/ui/t/maya/recall?q=Where+does+Maya+work%3F",
    ):
        reply = admin.get(path)
        assert reply.status_code == 200, (path, reply.text[:500])
        assert "default-src 'self'" in reply.headers["content-security-policy"]
    assert "Lisbon" in admin.get("/ui/t/maya/search?q=Lisbon").text
    assert "&lt;user-persona&gt;" in admin.get("/ui/t/maya/recall?q=work").text


def test_chinese_text_comes_back_as_written(admin: httpx.Client) -> None:
    page = admin.get("/ui/t/li-wei/messages").text
    assert "我叫李伟，住在杭州，喜欢喝龙井茶。" in page
    assert 'href="/ui/t/li-wei/messages/li%2FD1%3A1"' in page
    message = admin.get("/ui/t/li-wei/messages/li%2FD1%3A1")
    assert message.status_code == 200
    assert "我叫李伟" in message.text


def test_a_scoped_key_sees_its_tenant_only(maya_only: httpx.Client) -> None:
    assert maya_only.get("/ui/t/maya").status_code == 200
    home = maya_only.get("/ui/").text
    assert "/ui/t/maya" in home
    assert "li-wei" not in home
    assert "li-wei" not in maya_only.get("/ui/status").text
    for path in ("/ui/t/li-wei", "/ui/t/li-wei/atoms", "/ui/t/li-wei/messages", "/ui/t/li-wei/search?q=tea"):
        assert maya_only.get(path).status_code == 404, path
    token = csrf_of(maya_only.get("/ui/t/maya").text)
    forget = maya_only.post("/ui/t/li-wei/forget", data={"csrf": token, "confirm": "li-wei"})
    assert forget.status_code == 404


def test_a_form_without_its_csrf_token_is_refused_and_changes_nothing(admin: httpx.Client) -> None:
    atom = first_atom(admin, "maya")
    before = admin.get(f"/ui/t/maya/atoms/{atom}").text
    for data in ({"content": "forged"}, {"content": "forged", "csrf": "0" * 64}):
        reply = admin.post(f"/ui/t/maya/atoms/{atom}/edit", data=data)
        assert reply.status_code == 403
    assert admin.get(f"/ui/t/maya/atoms/{atom}").text == before


def test_editing_an_atom_makes_a_version_that_supersedes_it(admin: httpx.Client) -> None:
    atom = first_atom(admin, "maya")
    token = csrf_of(admin.get(f"/ui/t/maya/atoms/{atom}").text)
    reply = admin.post(
        f"/ui/t/maya/atoms/{atom}/edit", data={"csrf": token, "content": "Maya cycles to work."}
    )
    assert reply.status_code == 303
    new = reply.headers["location"].rsplit("/", 1)[1]
    assert new != atom
    assert "Maya cycles to work." in admin.get(f"/ui/t/maya/atoms/{new}").text
    old = admin.get(f"/ui/t/maya/atoms/{atom}").text
    assert f'Superseded by <a href="/ui/t/maya/atoms/{new}"' in old
    pinned = admin.post(f"/ui/t/maya/atoms/{new}/pin", data={"csrf": token, "pinned": "1"})
    assert pinned.status_code == 303
    assert f"/ui/t/maya/atoms/{new}" in admin.get("/ui/t/maya/atoms?pinned=true").text


def test_bad_input_is_a_page_that_says_what_is_wrong(admin: httpx.Client) -> None:
    reply = admin.get("/ui/t/maya/atoms?since=yesterday")
    assert reply.status_code == 422
    assert "since must be a date" in reply.text
    token = csrf_of(admin.get("/ui/t/maya").text)
    refused = admin.post("/ui/t/maya/forget", data={"csrf": token, "confirm": "may"})
    assert refused.status_code == 422
    assert admin.get("/ui/t/maya").status_code == 200  # nothing was forgotten


def test_an_open_server_needs_no_login(tmp_path: Path) -> None:
    with LiveServer(tmp_path / "data") as live, httpx.Client(base_url=live.url) as client:
        assert client.get("/ui/").status_code == 200
        assert client.get("/ui/login").status_code == 303


def test_scene_and_persona_edits_go_through_the_facade(
    admin: httpx.Client, console_with_two_tenants: LiveServer
) -> None:
    overview = admin.get("/ui/t/maya").text
    token = csrf_of(overview)
    scene = re.search(r'href="/ui/t/maya/scenes/([^"]+)"', overview)
    assert scene
    edited = admin.post(
        f"/ui/t/maya/scenes/{scene.group(1)}",
        data={
            "csrf": token,
            "summary": "Edited summary",
            "content": "# Edited\n\n- Maya <b>rides</b> a bike.",
        },
    )
    assert edited.status_code == 303
    page = admin.get(edited.headers["location"]).text
    assert "Edited summary" in page
    assert "&lt;b&gt;rides&lt;/b&gt;" in page  # raw HTML in Markdown stays text
    api = httpx.get(
        f"{console_with_two_tenants.url}/v1/scenes/{scene.group(1)}",
        params={"user_id": "maya"},
        headers={"authorization": f"Bearer {ADMIN_KEY}"},
    ).json()
    assert api["summary"] == "Edited summary"
    persona = admin.post("/ui/t/maya/persona", data={"csrf": token, "body": "# Maya\n\nLives in Lisbon."})
    assert persona.status_code == 303
    assert "Lives in Lisbon." in admin.get("/ui/t/maya").text


def test_a_console_edit_leaves_a_backup_whose_diff_shows_the_removed_and_added_lines(
    admin: httpx.Client, console_with_two_tenants: LiveServer
) -> None:
    api = httpx.Client(
        base_url=console_with_two_tenants.url, headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=60
    )
    name = api.get("/v1/scenes", params={"user_id": "li-wei"}).json()[0]["name"]
    before = api.get(f"/v1/scenes/{name}", params={"user_id": "li-wei"}).json()
    listed = len(api.get(f"/v1/scenes/{name}/backups", params={"user_id": "li-wei"}).json())
    page = admin.get(f"/ui/t/li-wei/scenes/{name}").text
    body = "- 李伟住在苏州。\n- <script>alert(1)</script> likes tea"
    edited = admin.post(
        f"/ui/t/li-wei/scenes/{name}", data={"csrf": csrf_of(page), "summary": "", "content": body}
    )
    assert edited.status_code == 303
    backups = api.get(f"/v1/scenes/{name}/backups", params={"user_id": "li-wei"}).json()
    assert len(backups) == listed + 1  # the edit backed the scenes up first
    newest = backups[0]["id"]
    assert (
        api.get(f"/v1/scenes/{name}/backups/{newest}", params={"user_id": "li-wei"}).json()["body"]
        == (before["body"])
    )
    page = admin.get(f"/ui/t/li-wei/scenes/{name}").text
    assert f"backup={newest}#diff" in page and "Backups of the scene" in page
    diff = admin.get(f"/ui/t/li-wei/scenes/{name}", params={"backup": newest}).text
    removed = re.findall(r'<del><span class="sign">−</span>(.*?)</del>', diff)
    added = re.findall(r'<ins><span class="sign">\+</span>(.*?)</ins>', diff)
    first_old = next(line for line in before["body"].splitlines() if line.strip())
    assert first_old.replace("<", "&lt;").replace(">", "&gt;") in removed
    assert "- 李伟住在苏州。" in added
    assert "- &lt;script&gt;alert(1)&lt;/script&gt; likes tea" in added  # escaped, never markup
    assert "<script>alert" not in diff
    gone = admin.get(f"/ui/t/li-wei/scenes/{name}", params={"backup": "scenes-19700101T000000000000Z"})
    assert gone.status_code == 200 and "is gone" in gone.text
    api.close()


def test_a_console_persona_edit_leaves_a_backup_with_a_diff(admin: httpx.Client) -> None:
    overview = admin.get("/ui/t/li-wei").text
    first = admin.post("/ui/t/li-wei/persona", data={"csrf": csrf_of(overview), "body": "李伟喜欢龙井茶。"})
    assert first.status_code == 303
    admin.post("/ui/t/li-wei/persona", data={"csrf": csrf_of(overview), "body": "李伟喜欢碧螺春。"})
    overview = admin.get("/ui/t/li-wei").text
    assert "Backups of the persona" in overview
    found = re.search(r'href="/ui/t/li-wei\?backup=([^"#]+)#diff"', overview)
    assert found
    diff = admin.get("/ui/t/li-wei", params={"backup": found.group(1)}).text
    assert '<del><span class="sign">−</span>李伟喜欢龙井茶。</del>' in diff
    assert '<ins><span class="sign">+</span>李伟喜欢碧螺春。</ins>' in diff


def test_export_downloads_every_layer_and_run_now_answers(admin: httpx.Client) -> None:
    import io
    import zipfile

    reply = admin.get("/ui/t/li-wei/export")
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(reply.content)).namelist()
    assert any(n.endswith("messages.jsonl") for n in names), names
    token = csrf_of(admin.get("/ui/t/li-wei").text)
    run = admin.post("/ui/t/li-wei/run", data={"csrf": token})
    assert run.status_code == 303
    assert run.headers["location"] == "/ui/t/li-wei"


def test_logging_out_ends_the_session(console_with_two_tenants: LiveServer) -> None:
    with log_in(console_with_two_tenants.url, ADMIN_KEY) as client:
        token = csrf_of(client.get("/ui/").text)
        cookie = client.cookies["memstrata_console"]
        assert client.post("/ui/logout", data={"csrf": token}).status_code == 303
        client.cookies.set("memstrata_console", cookie, path="/ui")  # replaying the old cookie
        assert client.get("/ui/").status_code == 303
