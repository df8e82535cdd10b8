"""Memory without rerouting model traffic: Claude Code (``--mcp-config``) and the Codex CLI
(``mcp_servers`` in its config) talk to the scripted model directly and to memstrata's ``/mcp``
with the tenant header; the model asks for ``memory_search``, the CLI calls memstrata, and the
result that reaches the model is the right tenant's memory (ana's, never bob's). The
configurations are the ones docs/mcp.md shows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli_agents.conftest import Model, claude, codex, model_calls, searchable
from tests.support.live_server import LiveServer
from tests.support.llm_upstream import ScriptedUpstream

ANA, BOB = (
    "Ana keeps three beehives on the roof in Porto.",
    "Bob keeps seven beehives in a field near Lisbon.",
)
ASK = "Please search your memory for my beehives."


@pytest.fixture
def memstrata(tmp_path: Path) -> Iterator[LiveServer]:
    """memstrata holding ana's and bob's beehives, nothing proxied."""
    with LiveServer(tmp_path / "memstrata") as server:
        for user, text in (("ana", ANA), ("bob", BOB)):
            answer = httpx.post(server.url + "/v1/remember", json={"text": text, "user_id": user}, timeout=30)
            assert answer.status_code == 200, answer.text
            searchable(server, "beehives", user=user)
        yield server


def _results(tool: str, seen: list[str]) -> Model:
    def after(output: str) -> str:
        seen.append(output)
        return "Found them."

    return Model(tools={"search your memory": (tool, json.dumps({"query": "beehives"}))}, after_tool=after)


def test_claude_code_calls_memory_search_for_its_tenant(
    tmp_path: Path, memstrata: LiveServer, upstream: ScriptedUpstream
) -> None:
    seen: list[str] = []
    upstream.script = _results("mcp__memstrata__memory_search", seen)
    config = tmp_path / "mcp.json"
    server = {"type": "http", "url": memstrata.url + "/mcp", "headers": {"x-memstrata-user-id": "ana"}}
    config.write_text(json.dumps({"mcpServers": {"memstrata": server}}))
    argv = ("--mcp-config", str(config), "--allowedTools", "mcp__memstrata__memory_search")
    cli = claude(tmp_path, upstream.url, argv=argv)
    assert cli.run(ASK).stdout.strip() == "Found them."
    first = json.dumps(model_calls(upstream, "/v1/messages")[0].json)
    # The tools are listed to the model (as deferred tools, named in the request's text).
    assert "mcp__memstrata__memory_search" in first and "mcp__memstrata__remember" in first
    assert len(seen) == 1
    assert "three beehives" in seen[0] and "Porto" in seen[0]  # ana's memory reached the model
    assert "Lisbon" not in seen[0]  # bob's did not


def test_codex_calls_memory_search_for_its_tenant(
    tmp_path: Path, memstrata: LiveServer, upstream: ScriptedUpstream
) -> None:
    seen: list[str] = []
    upstream.script = _results("mcp__memstrata/memory_search", seen)  # Codex namespaces MCP tools
    extra = f"""
[mcp_servers.memstrata]
url = "{memstrata.url}/mcp"
http_headers = {{ "x-memstrata-user-id" = "ana" }}
"""
    cli = codex(tmp_path, upstream.openai_url, headers={}, extra=extra)
    assert cli.run(ASK).stdout.strip().splitlines()[-1] == "Found them."
    first = model_calls(upstream, "/v1/responses")[0].json
    spaces = {t["name"]: t for t in first["tools"] if t.get("type") == "namespace"}
    assert {"memory_search", "remember"} <= {t["name"] for t in spaces["mcp__memstrata"]["tools"]}
    assert len(seen) == 1
    assert "three beehives" in seen[0] and "Porto" in seen[0]
    assert "Lisbon" not in seen[0]


def test_codex_remembers_through_mcp_into_its_tenant(
    tmp_path: Path, memstrata: LiveServer, upstream: ScriptedUpstream
) -> None:
    seen: list[str] = []

    def after(output: str) -> str:
        seen.append(output)
        return "Remembered."

    note = json.dumps({"content": "Ana's queen bee is called Rainha."})
    upstream.script = Model(tools={"remember my queen": ("mcp__memstrata/remember", note)}, after_tool=after)
    extra = f"""
[mcp_servers.memstrata]
url = "{memstrata.url}/mcp"
http_headers = {{ "x-memstrata-user-id" = "ana" }}
"""
    cli = codex(tmp_path, upstream.openai_url, headers={}, extra=extra)
    cli.run("Please remember my queen bee's name: Rainha.")
    assert len(seen) == 1 and "error" not in seen[0].lower(), seen
    searchable(memstrata, "Rainha", user="ana")
    found = httpx.post(memstrata.url + "/v1/search", json={"query": "Rainha", "user_id": "bob"}, timeout=30)
    assert "Rainha" not in found.text  # into ana's memory, not bob's
