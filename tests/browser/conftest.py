"""The console in a real browser: Debian's chromium, driven by Playwright's Python API, against
a real ``memstrata serve`` subprocess on a loopback port, filled by ``memstrata import`` of the
demo conversation.

Without chromium these tests skip, except in CI (``CI`` set), where ``scripts/test`` installs
it and a missing browser fails the run. Every page a test opens is watched: a request to any
origin but the server's, or an error in the browser's console, fails the test.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

import pytest

from tests.support.serve_process import wait_up
from tests.support.sockets import free_port

CHROMIUM = shutil.which("chromium")
KEY = "browser-admin-key-0123"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


# docs/console.md's screenshots are refreshed on request (MEMSTRATA_SCREENSHOTS=docs/screenshots);
# otherwise they go to a temporary directory, so a test run leaves the checkout as it found it.
@functools.cache
def screenshots() -> Path:
    return Path(os.environ.get("MEMSTRATA_SCREENSHOTS") or tempfile.mkdtemp(prefix="memstrata-shots-"))


if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("chromium is not installed (scripts/test installs it in CI)", allow_module_level=True)


def server_env(home: Path, key: str | None) -> dict[str, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "MEMSTRATA_HOME": str(home)}
    env.pop("MEMSTRATA_API_KEY", None)
    if key:
        env["MEMSTRATA_API_KEY"] = key
    return env


# Module scope, not session: the server and the browser (whose sync API runs an event loop of its
# own) must be gone before the rest of the suite runs.
@pytest.fixture(scope="module")
def served_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of ``memstrata serve`` (with an API key) on the imported demo conversation."""
    home = tmp_path_factory.mktemp("browser") / "data"
    env = server_env(home, KEY)
    with as_file(files("memstrata.demo") / "sample.json") as demo:
        subprocess.run(
            [sys.executable, "-m", "memstrata", "import", str(demo), "--data-dir", str(home)],
            env=env, check=True, capture_output=True, timeout=300,
        )  # fmt: skip
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memstrata", "serve", "--port", str(port), "--data-dir", str(home)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    wait_up(proc, url, timeout=120)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if CHROMIUM is None:
        raise AssertionError("CI is set but chromium is not installed: scripts/test installs it")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@dataclass
class Watched:
    """A browser page with what it asked for and what it complained about."""

    page: Any
    base: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    refusals_expected: bool = False  # the test asks for 4xx pages on purpose (the browser logs each)

    def goto(self, path: str) -> Any:
        return self.page.goto(self.base + path)

    def log_in(self, key: str = KEY) -> None:
        self.goto("/ui/")
        self.page.fill("#key", key)
        self.page.click("button[type=submit]")
        self.page.wait_for_url("**/ui/")

    def shot(self, name: str) -> None:
        screenshots().mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(screenshots() / f"{name}.png"), full_page=True)

    def check_clean(self) -> None:
        """No request left the server's origin; the browser's console holds no error."""
        outside = [u for u in self.requests if not u.startswith((self.base + "/", "data:", "about:"))]
        assert not outside, f"requests left {self.base}: {outside}"
        errors = [e for e in self.errors if not (self.refusals_expected and _refusal(e))]
        assert not errors, f"console errors: {errors}"


def watch(browser: Any, base: str, **context: Any) -> Iterator[Watched]:
    ctx = browser.new_context(**context)
    page = ctx.new_page()
    watched = Watched(page, base)
    page.on("request", lambda r: watched.requests.append(r.url))
    page.on("console", lambda m: watched.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: watched.errors.append(str(e)))
    page.on("dialog", lambda d: d.accept())
    yield watched
    ctx.close()
    watched.check_clean()


def _refusal(text: str) -> bool:
    """How the browser logs a page answered with a 4xx status."""
    return text.startswith("Failed to load resource: the server responded with a status of 4")


@pytest.fixture
def tab(browser: Any, served_demo: str) -> Iterator[Watched]:
    """A fresh browser context (no cookie) on the demo server, watched."""
    yield from watch(browser, served_demo, viewport={"width": 1280, "height": 800})


# The WCAG 2 contrast ratio of every element's own text against the first opaque background
# behind it (its own or an ancestor's); AA asks 4.5:1 for normal text, 3:1 for large text.
CONTRAST_JS = """
() => {
  const rgb = (s) => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] === 1)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const low = [];
  for (const el of document.body.querySelectorAll("*")) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.checkVisibility()) continue;
    const style = getComputedStyle(el);
    const a = lum(rgb(style.color).slice(0, 3)), b = lum(background(el));
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < need) low.push(`${el.tagName}.${el.className} ${ratio.toFixed(2)}: ${el.textContent.trim().slice(0, 40)}`);
  }
  return low;
}
"""


def low_contrast(page: Any) -> list[str]:
    """Elements whose text fails WCAG AA contrast on the page as rendered."""
    found: list[str] = page.evaluate(CONTRAST_JS)
    return found
