"""The console clicked through in headless chromium: log in, every page (with its screenshot for
the docs), the drill-down persona -> scene -> atom -> source message and back, search, recall,
curation, import and forget, a scoped key, a form without its CSRF token."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from memstrata.demo import sample
from memstrata.gateway.access import Principal
from tests.browser.conftest import KEY, Watched, low_contrast, watch
from tests.e2e.gateway.conftest import KEY as GATEWAY_KEY
from tests.support.keyrings import ScopedKeys
from tests.support.live_server import LiveServer

SCRATCH = {
    "sessions": [
        {
            "sessionKey": "chat-scratch",
            "userId": "scratch-zh",
            "conversations": [
                [
                    {
                        "role": "user",
                        "content": "我叫李伟，住在杭州，每天早上喝龙井茶。",
                        "timestamp": "2026-03-01T08:00:00Z",
                    },
                    {
                        "role": "assistant",
                        "content": "很高兴认识你，李伟！杭州很美。",
                        "timestamp": "2026-03-01T08:00:05Z",
                    },
                    {
                        "role": "user",
                        "content": "I also work as a teacher at a primary school.",
                        "timestamp": "2026-03-01T08:01:00Z",
                    },
                ]
            ],
        }
    ]
}


def heading(tab: Watched) -> str:
    return str(tab.page.locator("h1").first.inner_text())


def look(tab: Watched, name: str) -> None:
    """Screenshot the page for the docs, after checking its text contrast."""
    assert not low_contrast(tab.page), (name, low_contrast(tab.page))
    tab.shot(name)


def test_log_in_then_every_page_opens(tab: Watched) -> None:
    tab.goto("/ui/t/maya")
    assert "/ui/login" in tab.page.url  # no session yet
    look(tab, "login")
    tab.log_in()
    pages = [
        ("tenants", "/ui/", "Tenants"),
        ("status", "/ui/status", "Status"),
        ("overview", "/ui/t/maya", "maya"),
    ]
    for name, path, title in pages:
        tab.goto(path)
        assert title in heading(tab)
        look(tab, name)
    tab.page.click("nav[aria-labelledby=scenes-h] a")
    expect(tab.page.locator("article.doc")).to_be_visible()
    look(tab, "scene")
    tab.page.click("ul.atoms a")
    assert "Atom" in heading(tab)
    look(tab, "atom")
    for name, link, title in (("atoms", "Atoms", "Atoms"), ("messages", "Messages", "Messages")):
        tab.page.click(f"nav.tenant-nav >> text={link}")
        assert title in heading(tab)
        look(tab, name)
    tab.page.click("ul.messages a")
    expect(tab.page.locator("li.message.current")).to_be_visible()
    look(tab, "message")
    tab.goto("/ui/import")
    look(tab, "import")


def test_drill_down_from_persona_to_a_source_message_and_back(tab: Watched) -> None:
    tab.log_in()
    tab.goto("/ui/t/maya")
    assert tab.page.locator("article.doc").inner_text().strip()  # the persona, rendered
    scene = tab.page.locator("nav[aria-labelledby=scenes-h] a").first
    scene_name = scene.inner_text()
    scene.click()
    assert heading(tab) == scene_name
    atom = tab.page.locator("ul.atoms li a").first
    atom_text = atom.inner_text()
    atom.click()
    assert tab.page.locator("blockquote.content").inner_text() == atom_text
    source = tab.page.locator("ul.messages a").first
    source_text = source.inner_text()
    source.click()
    current = tab.page.locator("li.message.current")
    assert source_text in current.inner_text()  # highlighted in its session
    made = tab.page.locator("ul.atoms a", has_text=atom_text)
    expect(made.first).to_be_visible()  # back up: the atom made from it
    made.first.click()
    assert tab.page.locator("blockquote.content").inner_text() == atom_text
    tab.page.click(f"p.crumbs >> text={scene_name}")
    assert heading(tab) == scene_name


def test_search_and_recall_preview(tab: Watched) -> None:
    tab.log_in()
    tab.goto("/ui/t/maya/search")
    tab.page.fill("#q", "Where does Maya work?")
    tab.page.click("form[role=search] button")
    hits = tab.page.locator("ol.hits > li")
    expect(hits.first).to_be_visible()  # the click only waits for the answer, not its parse
    assert re.search(r"L[01]", hits.first.locator(".badge").inner_text())
    assert "score" in hits.first.inner_text()
    assert "Why:" in hits.first.inner_text()
    look(tab, "search")
    tab.page.click("nav.tenant-nav >> text=Recall")
    tab.page.fill("#q", "What food should I avoid offering Maya?")
    tab.page.click("main form button")
    assert "<user-persona>" in tab.page.locator("#system-context").inner_text()
    assert "chars" in tab.page.locator("h2", has_text="System context").inner_text()
    look(tab, "recall")


def open_atom(tab: Watched, text: str | None = None) -> str:
    tab.goto("/ui/t/maya/atoms")
    link = tab.page.locator("ul.atoms li:not(.superseded) a", has_text=text or "").first
    link.click()
    return str(tab.page.url)


def test_edit_an_atom_then_pin_and_delete_it(tab: Watched) -> None:
    tab.log_in()
    old_url = open_atom(tab)
    tab.page.fill("#atom-content", "Maya works as a data engineer in Lisbon, and rides to work.")
    tab.page.click("text=Save a new version")
    assert tab.page.url != old_url
    assert "rides to work" in tab.page.locator("blockquote.content").inner_text()
    assert "v2" in heading(tab)
    older = tab.page.locator("ul.versions li.superseded a")
    expect(older).to_have_count(1)  # the old version, marked superseded
    older.click()
    assert tab.page.url == old_url
    assert "Superseded by" in tab.page.locator("p.notice").inner_text()
    tab.page.click("p.notice a")
    tab.page.click("button:has-text('Pin')")
    expect(tab.page.locator("button:has-text('Unpin')")).to_be_visible()
    new_url = tab.page.url
    tab.goto("/ui/t/maya/atoms?pinned=true")
    expect(tab.page.locator("ul.atoms li a")).to_have_count(1)
    tab.page.goto(new_url)
    deleted_at = int(time.time() * 1000)
    tab.page.click("button:has-text('Delete')")  # confirm() accepted by the fixture
    tab.page.wait_for_url("**/ui/t/maya/atoms")
    assert "rides to work" not in tab.page.locator("ul.atoms").inner_text()
    wait_for_the_rewrite(tab.base, deleted_at)


def wait_for_the_rewrite(base: str, since_ms: int, timeout: float = 60) -> None:
    """A delete makes L2 due at once: wait for the server's worker to rewrite maya's scenes, so the
    next tests read settled pages (the run's own scene backup would race their backup count)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = httpx.get(f"{base}/v1/status", headers={"Authorization": f"Bearer {KEY}"}).json()
        maya = next(t for t in status["tenants"] if t["tenant"]["user_id"] == "maya")
        if (maya["last_l2"] or 0) >= since_ms:
            return
        time.sleep(0.2)
    raise AssertionError(f"no L2 run rewrote the scenes within {timeout} s of the delete")


def test_edit_a_scene_then_see_its_backup_and_the_diff(tab: Watched) -> None:
    tab.log_in()
    tab.goto("/ui/t/maya")
    tab.page.locator("nav[aria-labelledby=scenes-h] a").last.click()  # not the screenshot's scene
    tab.page.wait_for_load_state()  # the click waits for the answer, not for its parse
    listed = tab.page.locator("ol.backup-list > li").count()
    tab.page.click("summary:has-text('Edit this scene')")
    old = tab.page.input_value("#scene-content")
    gone = next(line for line in old.splitlines() if line.strip())
    new = (
        old.replace(gone, "- Maya keeps a sourdough starter called Bubbles.", 1)
        + "\n- Maya bakes on Sundays."
    )
    tab.page.fill("#scene-content", new)
    tab.page.click("button:has-text('Save the scene')")
    tab.page.wait_for_load_state()
    assert "Bubbles" in tab.page.locator("article.doc").inner_text()
    backups = tab.page.locator("ol.backup-list > li")
    expect(backups).to_have_count(listed + 1)  # the edit backed the scenes up first
    assert "1 line removed, 2 added" in backups.first.inner_text()
    backups.first.locator("a").click()
    assert "#diff" in tab.page.url
    diff = tab.page.locator("figure.diff")
    expect(diff).to_be_visible()
    removed = diff.locator("tr.del").all_inner_texts()
    added = diff.locator("tr.add").all_inner_texts()
    assert any(gone.strip() in r for r in removed), removed
    assert any("Bubbles" in a for a in added) and any("bakes on Sundays" in a for a in added), added
    assert "aria-current" in (tab.page.locator("ol.backup-list > li").first.evaluate("e => e.outerHTML"))
    look(tab, "scene-diff")


def test_import_then_forget_a_scratch_tenant(tab: Watched, tmp_path: Path) -> None:
    tab.log_in()
    scratch = tmp_path / "scratch.json"
    scratch.write_text(json.dumps(SCRATCH, ensure_ascii=False), encoding="utf-8")
    tab.goto("/ui/import")
    tab.page.set_input_files("#file", str(scratch))
    tab.page.click("main button[type=submit]")
    assert "Imported scratch.json" in tab.page.locator("p.notice").inner_text()
    tab.page.click("main ul a:has-text('scratch-zh')")
    tab.page.click("nav.tenant-nav >> text=Messages")
    assert "我叫李伟，住在杭州，每天早上喝龙井茶。" in tab.page.locator("ul.messages").inner_text()
    look(tab, "messages-zh")
    tab.goto("/ui/t/scratch-zh")
    tab.page.click("summary:has-text('Forget this tenant')")
    tab.page.fill("#confirm", "scratch-zh")
    tab.page.click("button:has-text('Forget scratch-zh')")
    assert "forgotten" in heading(tab)
    tab.goto("/ui/")
    assert "scratch-zh" not in tab.page.locator("main").inner_text()
    tab.refusals_expected = True
    assert tab.goto("/ui/t/scratch-zh").status == 404


def test_a_form_without_its_csrf_token_is_refused(tab: Watched) -> None:
    tab.log_in()
    url = open_atom(tab)
    before = tab.page.locator("blockquote.content").inner_text()
    tab.page.evaluate("document.querySelectorAll('input[name=csrf]').forEach((e) => e.remove())")
    tab.page.fill("#atom-content", "forged without a token")
    tab.refusals_expected = True
    with tab.page.expect_navigation() as sent:
        tab.page.click("text=Save a new version")
    assert sent.value.status == 403
    assert "CSRF" in tab.page.locator("main").inner_text()
    tab.page.goto(url)
    assert tab.page.locator("blockquote.content").inner_text() == before


def test_on_a_phone_the_overview_fits_the_screen(browser: Any, served_demo: str) -> None:
    for tab in watch(browser, served_demo, viewport={"width": 390, "height": 844}, is_mobile=True):
        tab.log_in()
        tab.goto("/ui/t/maya")
        tab.page.keyboard.press("Tab")  # the first stop is the skip link, then the page itself
        assert tab.page.evaluate("document.activeElement.className") == "skip"
        tab.page.keyboard.press("Enter")
        assert tab.page.evaluate("document.activeElement.id") == "main"
        wide = tab.page.evaluate("document.documentElement.scrollWidth")
        assert wide <= 390
        look(tab, "overview-phone")


@pytest.fixture
def scoped_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A gateway (in this process, on loopback) with a key scoped to ``maya``, holding the demo
    and the scratch tenant, imported over the API."""
    with LiveServer(tmp_path / "data", api_key=GATEWAY_KEY) as live:  # see test_console.ADMIN_KEY
        live.app.state.keyring = ScopedKeys(
            GATEWAY_KEY, {"maya-key-4567": Principal("maya-key", tenants=(("maya", None),))}
        )
        for doc in (sample(), SCRATCH):
            reply = httpx.post(
                live.url + "/v1/import", json={"data": doc}, headers=live.headers(), timeout=300
            )
            assert reply.status_code == 200, reply.text
        yield live


def test_a_scoped_key_cannot_open_another_tenants_pages(browser: Any, scoped_server: LiveServer) -> None:
    for tab in watch(browser, scoped_server.url):
        tab.log_in("maya-key-4567")
        assert "/ui/t/maya" in tab.page.locator("main").inner_html()
        assert "scratch-zh" not in tab.page.locator("main").inner_text()
        tab.refusals_expected = True
        for path in ("/ui/t/scratch-zh", "/ui/t/scratch-zh/atoms", "/ui/t/scratch-zh/messages"):
            assert tab.goto(path).status == 404
        assert tab.goto("/ui/t/maya").status == 200
