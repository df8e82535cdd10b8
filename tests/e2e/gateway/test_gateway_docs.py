"""The service docs cannot drift: every served route is documented, the MCP configurations are
valid and name a real command, and the example agent loop runs against a scripted model."""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path
from typing import Any

import httpx

from memstrata import Memory
from memstrata.cli.main import app
from tests.support.live_server import LiveServer
from tests.support.openai_server import ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"


def served(server: LiveServer) -> set[tuple[str, str]]:
    schema = httpx.get(server.url + "/openapi.json", headers=server.headers()).json()
    return {(method.upper(), path) for path, ops in schema["paths"].items() for method in ops}


def test_every_native_route_is_in_the_http_api_doc_and_nothing_else(server: LiveServer) -> None:
    doc = (DOCS / "http-api.md").read_text()
    documented = set(re.findall(r"`(GET|POST|PUT|PATCH|DELETE) (/v1/[^`\s]*)`", doc))
    native = {r for r in served(server) if r[1].startswith("/v1/")}
    assert native - documented == set(), "served but not documented"
    assert documented - native == set(), "documented but not served"


def test_every_tdam_route_is_in_the_compatibility_doc(server: LiveServer) -> None:
    doc = (DOCS / "tdam-compat.md").read_text()
    tdam = {path for _, path in served(server) if not path.startswith("/v1/")}
    missing = {
        p
        for p in tdam
        if f" {p}`" not in doc and not (p.startswith("/v2/") and p.replace("/v2/", "/v3/", 1) in doc)
    }
    assert missing == set()


def json_blocks(doc: str) -> list[Any]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", doc, re.DOTALL)]


def test_the_mcp_client_configurations_are_valid_and_run_memstrata_mcp() -> None:
    import typer.main

    configs = json_blocks((DOCS / "mcp.md").read_text())
    stdio = configs[0]["mcpServers"]["memstrata"]
    assert stdio["command"] == "memstrata" and stdio["args"][0] == "mcp"
    command = typer.main.get_group(app).commands["mcp"]
    options = {opt for param in command.params for opt in getattr(param, "opts", [])}
    assert {a for a in stdio["args"][1:] if a.startswith("--")} <= options
    http = configs[1]["mcpServers"]["memstrata"]
    assert http["url"].endswith("/mcp") and "x-memstrata-user-id" in http["headers"]


def test_the_example_agent_loop_with_a_scripted_model(
    tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    example = runpy.run_path(str(ROOT / "examples" / "agent_loop.py"))
    openai_server.enqueue_chat("Nice to meet you, Maya! Rosemary it is.")
    openai_server.enqueue_chat("Your cat is called Rosemary.")
    lines = ["Hi, I'm Maya and my cat is called Rosemary.", "What is my cat called?", ""]
    argv = [
        "--base-url",
        openai_server.base_url,
        "--model",
        "scripted",
        "--memory",
        str(tmp_path / "mem"),
        "--user",
        "maya",
    ]
    replies = example["main"](argv, lines)
    assert replies == ["Nice to meet you, Maya! Rosemary it is.", "Your cat is called Rosemary."]
    second = openai_server.bodies("chat")[1]["messages"]
    assert "Rosemary" in second[-1]["content"]  # recall's context went into the second prompt
    # The loop gives its model no memory tools: the guide to them is left out.
    assert "<memory-tools-guide>" not in second[0]["content"]
    with Memory.open(tmp_path / "mem", read_only=True) as mem:
        stored = [m.content for m in mem.messages(user_id="maya")]
    assert stored == [lines[0], replies[0], lines[1], replies[1]]  # once each, the prompts clean


def test_the_browsable_docs_work_offline_and_open_while_the_api_stays_closed(server: LiveServer) -> None:
    assert server.api_key, "the module's server has a key"
    for page in ("/docs", "/redoc"):
        answer = httpx.get(server.url + page)  # a browser: no Authorization header
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
        html = answer.text
        assert "http://" not in html and "https://" not in html, f"{page} loads something from outside"
        assets = re.findall(r"""(?:src|href|spec-url)=["']([^"']+)["']""", html)
        assets += re.findall(r"""url: ?["']([^"']+)["']""", html)  # Swagger UI's schema and redirect
        assert any(a.endswith(".js") for a in assets) and "/openapi.json" in assets
        for asset in assets:
            assert asset.startswith("/"), f"{page} names a non-local asset {asset!r}"
            loaded = httpx.get(server.url + asset)
            assert loaded.status_code == 200 and loaded.content, asset
    schema = httpx.get(server.url + "/openapi.json").json()
    assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert schema["security"] == [{"bearer": []}]  # "Authorize" on the page sends the key
    assert schema["paths"]["/v1/health"]["get"]["security"] == []
    # The API the docs describe stays closed without the key, and opens with it.
    assert httpx.get(server.url + "/v1/status").status_code == 401
    assert httpx.post(server.url + "/docs").status_code == 401  # only reading the docs is open
    assert httpx.get(server.url + "/v1/status", headers=server.headers()).status_code == 200
