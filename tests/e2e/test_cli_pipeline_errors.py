"""L2 and L3 failures are visible in the CLI: ``memstrata import`` names them and exits 1, and
``memstrata status`` shows every tenant's L2/L3 state next to the sessions'. The LLM engine talks to
a scripted OpenAI-compatible server on 127.0.0.1; everything else is real (files, SQLite)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memstrata.cli.common import console
from memstrata.cli.main import app
from tests.support.openai_server import ScriptedOpenAIServer

runner = CliRunner()
SEED = {
    "sessions": [
        {
            "sessionKey": "trip",
            "userId": "maya",
            "conversations": [
                [
                    {
                        "role": "user",
                        "content": "I'm flying to Tokyo on May 3 for Config Asia.",
                        "name": "Maya",
                    },
                    {"role": "assistant", "content": "Exciting! Enjoy the conference."},
                ]
            ],
        }
    ]
}
EXTRACTED = json.dumps(
    {
        "scenes": [
            {
                "scene_name": "travel",
                "memories": [
                    {"content": "Maya flies to Tokyo on May 3 for Config Asia.", "type": "episodic"}
                ],
            }
        ]
    }
)
SCENE = "# Travel\n\n- Maya flies to Tokyo on May 3 for Config Asia.\n"


def invoke(*args: str, server: ScriptedOpenAIServer | None = None) -> tuple[int, str]:
    """Run the CLI; with ``server`` the pipeline uses the LLM engine on it."""
    env = {"MEMSTRATA_EMBEDDING__PROVIDER": "none"}
    if server is not None:
        env |= {
            "MEMSTRATA_PIPELINE__ENGINE": "llm",
            "MEMSTRATA_LLM__BASE_URL": server.base_url,
            "MEMSTRATA_LLM__MODEL": "cli-test-model",
            # Each scripted fault must reach the stage (no per-call retry uses up the script).
            "MEMSTRATA_LLM__RETRIES": "0",
        }
    r = runner.invoke(app, list(args), env=env)
    return r.exit_code, r.output


def words(text: str) -> str:
    """Output with line wrapping undone (rich wraps long lines at a space)."""
    return " ".join(text.split())


@pytest.fixture
def seed(tmp_path: Path) -> Path:
    f = tmp_path / "seed.json"
    f.write_text(json.dumps(SEED))
    return f


@pytest.fixture
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """A console wide enough that table cells are not folded, so they can be read back."""
    monkeypatch.setattr(console, "width", 400)


def status_json(data: Path) -> dict[str, Any]:
    code, out = invoke("--data-dir", str(data), "status", "--format", "json")
    assert code == 0, out
    found: dict[str, Any] = json.loads(out)[0]
    return found


def test_import_names_an_l2_failure_and_exits_1(
    tmp_path: Path, seed: Path, openai_server: ScriptedOpenAIServer
) -> None:
    data = tmp_path / "data"
    openai_server.enqueue_chat(EXTRACTED)
    openai_server.enqueue_error(500, "scene model down")

    code, out = invoke("--data-dir", str(data), "import", str(seed), server=openai_server)

    assert code == 1, out
    assert "1 memory atoms in store" in words(out)  # L1 worked: only L2 failed
    assert "pipeline error L2 maya/default: ModelError" in words(out)
    assert "scene model down" in words(out)
    [tenant] = status_json(data)["tenants"]
    assert tenant["l2_attempts"] == 1 and "scene model down" in tenant["l2_error"]
    assert tenant["l2_cursor"] == 0 and tenant["l2_fire_at"] is not None  # retried later


def test_an_l1_failure_is_no_progress_and_the_import_says_what_failed(
    tmp_path: Path, seed: Path, openai_server: ScriptedOpenAIServer
) -> None:
    data = tmp_path / "data"
    for _ in range(3):  # the import's run, then run_all's retry and the close's (due or not)
        openai_server.enqueue_chat("I am sorry, I cannot help with that.")  # prose: no JSON

    code, out = invoke("--data-dir", str(data), "import", str(seed), server=openai_server)

    assert code == 1, out
    text = words(out)
    assert re.search(r"L1 extraction [━ ]*0/1", text), text  # not "1/1": nothing was extracted
    assert re.search(r"L1 extraction failed [━ ]*1/1", text), text
    assert re.search(r"extracted 0 sessions into 0 new atoms, \d+ failed runs", text), text
    assert "pipeline error L1 maya/default/" in text and "ParseError: no JSON value" in text


def test_import_names_an_l3_failure_and_exits_1(
    tmp_path: Path, seed: Path, openai_server: ScriptedOpenAIServer
) -> None:
    data = tmp_path / "data"
    openai_server.enqueue_chat(EXTRACTED)
    write = json.dumps({"path": "scene_blocks/travel.md", "content": SCENE})
    openai_server.enqueue_chat("", tool_calls=[("write_file", write)])
    openai_server.enqueue_chat("Consolidated.")
    openai_server.enqueue_error(500, "persona model down")

    code, out = invoke("--data-dir", str(data), "import", str(seed), server=openai_server)

    assert code == 1, out
    assert "pipeline error L3 maya/default: ModelError" in words(out)
    assert "persona model down" in words(out)
    assert "pipeline error L2" not in words(out)
    [tenant] = status_json(data)["tenants"]
    assert tenant["l2_error"] is None and tenant["l2_cursor"] > 0
    assert tenant["l3_pending"] and tenant["l3_attempts"] == 1 and "persona model down" in tenant["l3_error"]


def test_an_import_without_failures_exits_0_and_names_no_error(
    tmp_path: Path, seed: Path, openai_server: ScriptedOpenAIServer
) -> None:
    data = tmp_path / "data"
    openai_server.enqueue_chat(EXTRACTED)
    write = json.dumps({"path": "scene_blocks/travel.md", "content": SCENE})
    openai_server.enqueue_chat("", tool_calls=[("write_file", write)])
    openai_server.enqueue_chat("Consolidated.")
    persona = json.dumps({"path": "persona.md", "content": "# Maya\n\nTravels for design conferences.\n"})
    openai_server.enqueue_chat("", tool_calls=[("write_file", persona)])
    openai_server.enqueue_chat("Written.")

    code, out = invoke("--data-dir", str(data), "import", str(seed), server=openai_server)

    assert code == 0, out
    assert "pipeline error" not in out
    [tenant] = status_json(data)["tenants"]
    assert (tenant["l2_error"], tenant["l3_error"], tenant["l3_pending"]) == (None, None, False)


def test_status_shows_each_tenants_l2_and_l3_state(
    tmp_path: Path, seed: Path, openai_server: ScriptedOpenAIServer, wide_console: None
) -> None:
    data = tmp_path / "data"
    openai_server.enqueue_chat(EXTRACTED)
    write = json.dumps({"path": "scene_blocks/travel.md", "content": SCENE})
    openai_server.enqueue_chat("", tool_calls=[("write_file", write)])
    openai_server.enqueue_chat("Consolidated.")
    openai_server.enqueue_error(500, "persona model down")
    assert invoke("--data-dir", str(data), "import", str(seed), server=openai_server)[0] == 1
    cursor = status_json(data)["tenants"][0]["l2_cursor"]

    code, out = invoke("--data-dir", str(data), "status")

    assert code == 0, out
    assert "L1 pipeline" in out and "L2/L3 pipeline" in out
    header = next(line for line in out.splitlines() if "L2 cursor" in line)
    assert [c.strip() for c in header.strip("│┃ ").split("┃")] == [
        "tenant",
        "L2 cursor",
        "L2 next run",
        "L2 attempts",
        "L2 last error",
        "L3",
        "L3 attempts",
        "L3 last error",
    ]
    row = next(line for line in out.splitlines() if "maya/default" in line and "persona model down" in line)
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells[0] == "maya/default" and cells[1] == str(cursor)
    assert cells[3:5] == ["0", ""]  # L2 succeeded
    assert cells[5] == "pending; no persona yet" and cells[6] == "1"
    assert "ModelError" in cells[7] and "persona model down" in cells[7]
