"""Every code block of the README runs, in order, in a folder of the test's own (HOME pointed
there), and its output shows what the block's comments say. The Python quickstart and the seed
file are checked in ``test_readme.py``; this module runs the shell blocks and checks the drawing.

Named rules, the only places a block is not run as written:

    INSTALLS      a command that installs (``python3 -m venv``, ``pip install``, ``bash
                  scripts/test``) is skipped: the test runs in the installed package already. The
                  memstrata commands beside it on the line still run.
    PORT          ``8420`` (the default port) becomes a free port, so a server the test starts
                  never meets another process's.
    LONG_RUNNING  ``memstrata serve`` runs in the background until its health answers, serves the
                  block's later lines, and gets SIGTERM at the block's end (it must exit 0);
                  ``memstrata mcp`` is given an MCP client's first messages on stdin.
    SERVICE_SEED  the service block serves a memory seeded with ``history.json`` (the command-line
                  block's last line erased Maya).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from memstrata import Memory
from tests.support.sockets import free_port

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TDAI_FIXTURE = ROOT / "tests" / "fixtures" / "tdai"
INSTALLS = ("python3 -m venv", "pip install", ".venv/bin/pip install", "bash scripts/test")
DEFAULT_PORT = "8420"
MCP_SESSION: list[dict[str, object]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def fenced() -> list[tuple[str, str]]:
    return re.findall(r"```(\w+)\n(.*?)```", README.read_text(), re.DOTALL)


def shell_blocks() -> list[str]:
    return [body for kind, body in fenced() if kind == "bash"]


@dataclass
class Shell:
    """Runs README command lines in ``where`` the way a reader's shell would, by the rules above."""

    where: Path
    port: str = DEFAULT_PORT
    background: list[subprocess.Popen[str]] = field(default_factory=list)

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
        env |= {"HOME": str(self.where), "HF_HUB_OFFLINE": "1", "COLUMNS": "200", "NO_COLOR": "1"}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p)
        env["MEMSTRATA_SERVER__PORT"] = self.port  # PORT
        return env | extra

    def argv(self, words: list[str]) -> tuple[list[str], dict[str, str]]:
        extra: dict[str, str] = {}
        while words and re.match(r"^[A-Z_]+=", words[0]):
            name, _, value = words.pop(0).partition("=")
            extra[name] = value
        program, *args = words
        assert program.endswith("memstrata"), f"not a memstrata command: {words}"
        args = [
            str(self.where / a[2:]) if a.startswith("~/") else a.replace(DEFAULT_PORT, self.port)
            for a in args
        ]
        return [sys.executable, "-m", "memstrata", *args], extra

    def run(self, words: list[str], stdin: str | None = None) -> str:
        argv, extra = self.argv(words)
        done = subprocess.run(
            argv,
            cwd=self.where,
            env=self.env(extra),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{shlex.join(words)} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr

    def converse(
        self, words: list[str], messages: list[dict[str, object]], *, until_id: int
    ) -> list[dict[str, Any]]:
        """LONG_RUNNING (stdio): send JSON-RPC ``messages``, read answers until ``until_id``'s, then
        close stdin (an early EOF could end the server before it answers) and expect exit 0."""
        argv, extra = self.argv(words)
        proc = subprocess.Popen(
            argv,
            cwd=self.where,
            env=self.env(extra),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        answers: list[dict[str, Any]] = []
        while not any(a.get("id") == until_id for a in answers):
            line = proc.stdout.readline()
            assert line, f"{shlex.join(words)} ended without answering: {proc.communicate()}"
            if line.startswith("{"):
                answers.append(json.loads(line))
        proc.stdin.close()
        proc.wait(timeout=60)
        assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
        return answers

    def start(self, words: list[str]) -> str:
        """LONG_RUNNING: a server in the background; returns its URL once its health answers."""
        argv, extra = self.argv(words)
        proc = subprocess.Popen(
            argv,
            cwd=self.where,
            env=self.env(extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.background.append(proc)
        url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"{shlex.join(words)} stopped: {proc.communicate()}"
            try:
                if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                    return url
            except httpx.TransportError:
                time.sleep(0.2)
        pytest.fail(f"{shlex.join(words)} did not answer in 60 s")

    def stop_all(self) -> None:
        for proc in self.background:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, f"serve exited {proc.returncode} on SIGTERM: {err[-2000:]}"
        self.background.clear()


def commands(block: str) -> Iterator[tuple[str, list[str]]]:
    """``(the line without its comment, its words)`` for each command of a block, ``&&`` apart;
    INSTALLS commands are left out here, by name."""
    for line in block.splitlines():
        for part in line.split("&&"):
            words = shlex.split(part, comments=True)
            if not words or any(" ".join(words).startswith(x) for x in INSTALLS):
                continue  # INSTALLS
            yield " ".join(words), words


def key(line: str) -> str:
    """A line's name in CLI_CHECKS: the command without the program and the data directory
    (its words joined by spaces, quotes gone)."""
    return re.sub(r"^(\S*memstrata)( --data-dir \S+)? ", "", line)


@contextmanager
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Shell]:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("MEMSTRATA_HOME", raising=False)
    (json_block,) = [body for kind, body in fenced() if kind == "json"]
    (tmp_path / "history.json").write_text(json_block)  # the file the README shows before import
    run = Shell(tmp_path)
    try:
        yield run
    finally:
        run.stop_all()


def atoms_of(where: Path, user: str) -> list[tuple[str, str]]:
    with Memory.open(where, read_only=True, embedder=None) as mem:
        return sorted((a.id, a.content) for a in mem.atoms(user_id=user, limit=1000))


def check_forgotten(out: str, where: Path) -> None:
    assert "forgot maya/default" in out
    with Memory.open(where / "mem", read_only=True, embedder=None) as mem:
        assert mem.messages(user_id="maya") == [] and mem.atoms(user_id="maya") == []
    files = [p for p in (where / "mem").rglob("*") if p.is_file()]
    assert files and not any(b"allergic to peanuts" in p.read_bytes() for p in files)  # every byte


Check = Callable[[str, Path], None]
# What each command-line line's comment (or its command) promises, checked on its output.
CLI_CHECKS: dict[str, Check] = {
    "import history.json": lambda out, w: (
        None if "imported 1 sessions: 2 messages stored" in out else pytest.fail(out)
    ),
    "remember Maya is allergic to peanuts. --user maya": lambda out, w: (
        None
        if re.search(r"remembered a-\w+ \[persona\] Maya is allergic to peanuts\.", out)
        else pytest.fail(out)
    ),
    "import --from-tdai ~/old-memory": lambda out, w: (
        None if "2 sessions" in out and "memory atoms: 7 stored" in out else pytest.fail(out)
    ),
    # Lisbon first (the message, or its atom when it stands for it); the remembered note is
    # searchable at once
    "search where does Maya live --user maya": lambda out, w: (
        None
        if re.search(r"│ 1 +│ L[01] +│ [01]\.\d\d +│ (?:I|Maya) moved to Lisbon", out)
        and "allergic to peanuts" in out
        else pytest.fail(out)
    ),
    "recall any tips for Maya? --user maya": lambda out, w: (
        None
        if "<user-persona>" in out and "Lisbon" in out and "<scene-navigation>" in out
        else pytest.fail(out)
    ),
    "inspect l2 --user maya": lambda out, w: (
        None if re.search(r"scene_blocks/ *\S*\.md|\.md", out) else pytest.fail(out)
    ),
    "inspect l0 --since 7d --format jsonl": lambda out, w: (
        None
        if "I moved to Lisbon last week."
        in [json.loads(x)["content"] for x in out.splitlines() if x.startswith("{")]
        else pytest.fail(out)
    ),
    "status": lambda out, w: None if re.search(r"\d+ messages, \d+ current atoms", out) else pytest.fail(out),
    "reindex": lambda out, w: None if "embedded" in out else pytest.fail(out),
    "export --out ./maya-export --user maya": lambda out, w: (
        None if list((w / "maya-export").rglob("*.jsonl")) else pytest.fail(out)  # jsonl by default
    ),
    "import --from-export ./maya-export": lambda out, w: (
        None if atoms_of(w / "elsewhere", "maya") == atoms_of(w / "mem", "maya") != [] else pytest.fail(out)
    ),
    "forget --user maya --yes": check_forgotten,
}


def test_the_setup_block_runs_the_demo_offline_with_hybrid_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = shell_blocks()[0]
    assert "pip install" in setup and "bash scripts/test" in setup  # INSTALLS: skipped, by name
    with shell(tmp_path, monkeypatch) as run:
        ran = [run.run(words) for _, words in commands(setup)]
    assert len(ran) == 1, "the demo is the block's one command that is not an install"
    assert "strategy hybrid" in ran[0] and "L2 scenes" in ran[0] and "<user-persona>" in ran[0]


def test_every_command_line_of_the_cli_block_does_what_its_comment_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = shell_blocks()[1]
    lines = list(commands(block))
    assert {key(line) for line, _ in lines} == set(CLI_CHECKS), (
        "a README line without a check, or a stale check"
    )

    shutil.copytree(TDAI_FIXTURE, tmp_path / "old-memory")  # the TDAI data directory the line names
    with shell(tmp_path, monkeypatch) as run:
        for line, words in lines:
            CLI_CHECKS[key(line)](run.run(words), tmp_path)


def test_the_service_block_serves_searches_and_answers_mcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = shell_blocks()[2]
    lines = list(commands(block))
    verbs = [[w for w in words if not re.match(r"^[A-Z_]+=", w)][1] for _, words in lines]
    assert verbs == ["serve", "serve", "--url", "mcp"]
    with shell(tmp_path, monkeypatch) as run:
        run.run(["memstrata", "--data-dir", "./mem", "import", "history.json"])  # SERVICE_SEED
        run.port = str(free_port())  # PORT
        (_, serve), (_, keyed), (_, through), (_, mcp) = lines
        url = run.start(serve)  # "http://127.0.0.1:8420, MCP at /mcp"
        assert httpx.post(url + "/mcp", json={}).status_code != 404
        out = run.run(through)  # "the CLI through the server"
        assert "Lisbon" in out and "hits" in out
        run.port = str(free_port())
        keyed_url = run.start(keyed)  # with a key, off loopback
        assert httpx.get(keyed_url + "/v1/status").status_code == 401
        assert httpx.get(keyed_url + "/v1/status", headers={"authorization": "Bearer ..."}).status_code == 200
        argv, extra = run.argv([w for w in keyed if not w.startswith("MEMSTRATA_API_KEY=")])
        refused = subprocess.run(
            argv, cwd=tmp_path, env=run.env(extra), capture_output=True, text=True, timeout=60
        )
        assert refused.returncode != 0 and "without an API key" in refused.stderr  # "a key is required"
        run.stop_all()  # SIGTERM: each server drains and exits 0 (and frees ~/.memstrata for mcp)
        answers = run.converse(mcp, MCP_SESSION, until_id=2)
        tools = {t["name"] for a in answers if a.get("id") == 2 for t in a["result"]["tools"]}
        assert {"memory_search", "conversation_search", "read_scene", "remember", "recall"} <= tools


def test_the_layout_drawing_names_what_the_tree_holds() -> None:
    (drawing,) = [body for kind, body in fenced() if kind == "text"]
    src = ROOT / "src" / "memstrata"
    named = re.findall(r"(?<![\w./])([a-z_]+(?:/|\.py))(?=[\s,;:)]|$)", drawing)
    assert len(named) > 20
    missing = [n for n in named if not any(src.rglob(n.rstrip("/")))]
    assert missing == [], f"the README's layout names what src/memstrata does not hold: {missing}"


def test_every_block_of_the_readme_is_run_by_a_test() -> None:
    kinds = [kind for kind, _ in fenced()]
    # bash: the three blocks above; python and json: test_readme.py; text: the layout drawing.
    assert kinds.count("bash") == 3 and kinds.count("python") == 1
    assert kinds.count("json") == 1 and kinds.count("text") == 1 and len(kinds) == 6
