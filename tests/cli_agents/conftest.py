"""The coding-agent CLIs people run, driven for real: Claude Code (``claude -p``) and the Codex
CLI (``codex exec``), pinned in ``package.json`` / ``package-lock.json`` beside this file and
installed by ``scripts/test`` (``npm ci``) into ``node_modules`` here.

Each run gets a throwaway ``HOME``, a dummy key and a base URL on loopback: memstrata's proxy in
front of the scripted upstream (``tests.support.llm_upstream``), or, for the MCP tests, the
scripted upstream itself. ``HTTPS_PROXY`` points at a closed loopback port so whatever else a CLI
would fetch (telemetry, update checks) fails at once and nothing leaves the machine.

Where the CLIs are not installed the tests skip, saying how to install them; under CI
(``CI=true``) they fail instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.live_server import LiveServer
from tests.support.llm_upstream import Recorded, Reply, ScriptedUpstream

HERE = Path(__file__).parent
BIN = HERE / "node_modules" / ".bin"
FACT = "I keep three beehives on the roof of my flat in Porto."
ANSWER = "Noted: three beehives on your roof in Porto."
DEAD = "http://127.0.0.1:9"  # the discard port: nothing listens, a connection is refused at once


def require(name: str) -> Path:
    """The CLI's path; a skip (or, under CI, a failure) saying how to install it."""
    path = BIN / name
    if path.exists():
        return path
    why = f"{name} is not installed: run `npm ci` in {HERE} (scripts/test does)"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(why + "; CI requires the coding-agent CLIs")
    pytest.skip(why)


def prompt_of(rec: Recorded) -> str:
    """The text of the last user item of a recorded model call (tool results included)."""
    body = rec.json or {}
    items = body.get("messages") or body.get("input") or []
    users = [it for it in items if isinstance(it, dict) and it.get("role") == "user"]
    return json.dumps(users[-1]) if users else ""


def tool_result_in(rec: Recorded) -> str | None:
    """The last item's tool output when the call continues a tool loop (either wire format)."""
    body = rec.json or {}
    items = body.get("messages") or body.get("input") or []
    last = items[-1] if items else {}
    if last.get("type") == "function_call_output":
        return str(last.get("output"))
    content = last.get("content")
    if last.get("role") == "user" and isinstance(content, list):
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if results:
            return json.dumps(results[-1].get("content"))
    return None


@dataclass
class Model:
    """What the scripted model answers: ``tools`` maps a phrase of the prompt to the tool call
    it asks for (name, or ``namespace/name``, and JSON arguments); a request continuing a tool loop gets ``after_tool``;
    ``answers`` maps a phrase to a text; else ``ANSWER``."""

    tools: dict[str, tuple[str, str]] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)
    after_tool: Callable[[str], str] = lambda output: "The tool has run."

    def __call__(self, rec: Recorded) -> Reply:
        output = tool_result_in(rec)
        if output is not None:
            return Reply(text=self.after_tool(output))
        prompt = prompt_of(rec)
        for phrase, (tool, arguments) in self.tools.items():
            if phrase in prompt:
                space, _, name = tool.rpartition("/")  # "namespace/name": a namespaced tool
                return Reply(text="", tool=name, tool_input=arguments, namespace=space or None)
        for phrase, text in self.answers.items():
            if phrase in prompt:
                return Reply(text=text)
        return Reply(text=ANSWER)


@pytest.fixture
def upstream() -> Iterator[ScriptedUpstream]:
    with ScriptedUpstream() as up:
        up.script = Model()
        yield up


@pytest.fixture
def gateway(tmp_path: Path, upstream: ScriptedUpstream) -> Iterator[LiveServer]:
    """memstrata with its proxy in front of ``upstream`` (pass-through mode, no keys: the tenant
    comes from ``x-memstrata-user-id``). Recall gets 10 s rather than 150 ms: the machine is
    shared and a late recall would send the request without memories."""
    home = tmp_path / "memstrata"
    proxy = {"openai_url": upstream.openai_url, "anthropic_url": upstream.url, "recall_timeout_ms": 10_000}
    with LiveServer(home, proxy=proxy) as server:
        yield server


@dataclass
class Run:
    stdout: str
    stderr: str
    seconds: float


class Cli:
    """One CLI with its own throwaway ``HOME`` and working directory; ``run`` starts a new
    process (a new session) each time unless given ``more`` arguments that continue one."""

    def __init__(self, name: str, home: Path, env: dict[str, str], argv: list[str]) -> None:
        self.path = require(name)
        self.home, self.work = home / "home", home / "work"
        self.home.mkdir(parents=True)
        self.work.mkdir(parents=True)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "TERM": "dumb",
            "LANG": "C.UTF-8",
            "HTTPS_PROXY": DEAD,
            "HTTP_PROXY": DEAD,
            "NO_PROXY": "127.0.0.1,localhost",
            **env,
        }
        self.argv = argv

    def run(self, prompt: str, *more: str, timeout: float = 120) -> Run:
        started = time.monotonic()
        done = subprocess.run(
            [str(self.path), *self.argv, *more, prompt],
            env=self.env,
            cwd=self.work,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        run = Run(done.stdout, done.stderr, time.monotonic() - started)
        assert done.returncode == 0, f"{self.path.name} exited {done.returncode}: {done.stderr[-3000:]}"
        return run


def interactive(
    cli: Cli, prompt: str, done: Callable[[], bool], shows: str, *, ready: str, seconds: float = 60
) -> str:
    """Run ``cli`` as a person would, in a terminal (tmux, a server of its own), wait for its
    input line (``ready``), type ``prompt``, then Enter (a moment later: typed at once, a TUI
    takes it as a paste), wait until ``done()`` and the screen ``shows`` it; the screen then.
    Skips (fails under CI) without tmux."""
    if shutil.which("tmux") is None:
        why = "tmux is not installed (scripts/test installs it as root)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(why)
        pytest.skip(why)
    socket = str(cli.home / "tmux.sock")
    tmux = ["tmux", "-u", "-S", socket]  # -u: UTF-8 whatever the locale (the TUIs draw ❯, ›)
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in cli.env.items())
    command = f"cd {shlex.quote(str(cli.work))} && env -i {env} {shlex.quote(str(cli.path))}"
    subprocess.run([*tmux, "new-session", "-d", "-x", "150", "-y", "40", command], check=True)
    try:
        screen = _wait_screen(tmux, ready, seconds)
        subprocess.run([*tmux, "send-keys", "-l", prompt], check=True)
        time.sleep(0.5)
        subprocess.run([*tmux, "send-keys", "Enter"], check=True)
        deadline = time.monotonic() + seconds
        while not done():
            assert time.monotonic() < deadline, f"the interactive run did not finish:\n{screen}"
            time.sleep(0.1)
        return _wait_screen(tmux, shows, 10)
    finally:
        subprocess.run([*tmux, "kill-server"], check=False)
        _reap(cli.home)


def _reap(home: Path, seconds: float = 5) -> None:
    """End what the TUI left running from its home (Codex's TUI starts an app-server daemon that
    leaves the terminal's session, so killing tmux leaves it behind)."""
    mark = str(home).encode()
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and mark in (proc / "cmdline").read_bytes():
                pids.append(int(proc.name))
        except OSError:
            continue  # gone meanwhile, or not ours to read
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + seconds
        while pids and time.monotonic() < deadline:
            pids = [pid for pid in pids if Path(f"/proc/{pid}").exists() and not _zombie(pid)]
            time.sleep(0.05)
        if not pids:
            return


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def _wait_screen(tmux: list[str], shows: str, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while True:
        screen = subprocess.run([*tmux, "capture-pane", "-p"], capture_output=True, text=True).stdout
        if shows in screen or time.monotonic() > deadline:
            return screen
        time.sleep(0.1)


def claude(tmp_path: Path, base_url: str, *, headers: str = "", argv: tuple[str, ...] = ()) -> Cli:
    env = {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-dummy",
        "ANTHROPIC_CUSTOM_HEADERS": headers,
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
    cli = Cli("claude", tmp_path / "claude", env, [*argv, "-p"])
    # What a person's first start asks once (onboarding, trusting the folder, the API key from
    # the environment), answered: the interactive test starts past it.
    state = {
        "hasCompletedOnboarding": True,
        "projects": {str(cli.work): {"hasTrustDialogAccepted": True}},
        "customApiKeyResponses": {"approved": [env["ANTHROPIC_API_KEY"][-20:]], "rejected": []},
    }
    (cli.home / ".claude.json").write_text(json.dumps(state))
    return cli


def codex(tmp_path: Path, base_url: str, *, headers: dict[str, str], extra: str = "") -> Cli:
    # A terminal type the TUI takes (with "dumb" it asks whether to go on).
    cli = Cli("codex", tmp_path / "codex", {"OPENAI_API_KEY": "sk-dummy", "TERM": "xterm-256color"}, [])
    config = cli.home / ".codex"
    config.mkdir()
    cli.env["CODEX_HOME"] = str(config)
    sent = ", ".join(f'"{k}" = "{v}"' for k, v in headers.items())
    (config / "config.toml").write_text(
        f"""model = "gpt-test"
model_provider = "memstrata"

[model_providers.memstrata]
name = "memstrata"
base_url = "{base_url}"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
http_headers = {{ {sent} }}

[projects."{cli.work}"]
trust_level = "trusted"
{extra}"""
    )
    # The shell tool runs unsandboxed: bubblewrap needs user namespaces a container may lack.
    cli.argv = ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
    return cli


def stored(server: LiveServer, user: str = "ana") -> list[dict[str, Any]]:
    """Every L0 message of ``user``, oldest first."""
    answer = httpx.get(server.url + "/v1/messages", params={"user_id": user}, timeout=30)
    assert answer.status_code == 200, answer.text
    return list(answer.json())


def settled(server: LiveServer, want: int, user: str = "ana", seconds: float = 20) -> list[dict[str, Any]]:
    """``stored`` once it holds ``want`` messages (answers are stored after the client has them),
    then a moment more to be sure nothing else comes."""
    deadline = time.monotonic() + seconds
    while len(stored(server, user)) < want and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    return stored(server, user)


def searchable(server: LiveServer, query: str, user: str = "ana", seconds: float = 30) -> None:
    """Wait until the tenant's memory finds ``query`` (extraction runs in the background)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        body = {"query": query, "user_id": user, "layers": ["L1"]}
        answer = httpx.post(server.url + "/v1/search", json=body, timeout=30)
        if query.lower() in answer.text.lower():
            return
        time.sleep(0.1)
    raise AssertionError(f"{query!r} never became searchable for {user}")


def recallable(server: LiveServer, query: str, fact: str = "Porto", seconds: float = 30) -> None:
    """Wait until recall for ``query`` brings ``fact`` back for ana (extraction, then the
    persona, run in the background): the next session's model call can then carry it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        body = {"query": query, "user_id": "ana", "session_key": "a-probe"}
        got = httpx.post(server.url + "/v1/recall", json=body, timeout=30).json()
        if fact in got.get("prepend_context", "") + got.get("system_context", ""):
            return
        time.sleep(0.1)
    raise AssertionError(f"recall for {query!r} never brought back {fact!r}")


def injected(rec: Recorded) -> bool:
    """Whether memstrata put memory into a model call: memories before the prompt, or the
    persona and scenes at the end of the system prompt (once the persona is written, a memory
    it holds is not repeated among the memories)."""
    body = rec.body.decode()
    return any(tag in body for tag in ("<relevant-memories>", "<user-persona>", "<scene-navigation>"))


def model_calls(up: ScriptedUpstream, path: str) -> list[Recorded]:
    return [r for r in up.requests if r.path.split("?")[0] == path]
