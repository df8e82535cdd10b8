"""``memstrata import`` ends with scenes and a persona; ``inspect l2`` and ``inspect l3`` show them."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memstrata.cli.main import app

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    r = runner.invoke(app, list(args), env={"MEMSTRATA_EMBEDDING__PROVIDER": "none"})
    return r.exit_code, r.output


def test_import_then_inspect_scenes_and_persona(tmp_path: Path, locomo_sample: Path) -> None:
    d = str(tmp_path / "data")
    code, out = invoke("--data-dir", d, "import", str(locomo_sample))
    assert code == 0, out

    code, out = invoke("--data-dir", d, "inspect", "l2", "--user", "conv-26", "--format", "json")
    assert code == 0, out
    scenes = json.loads(out)
    assert scenes and all(s["entry"]["atom_ids"] for s in scenes)
    first = scenes[0]["entry"]["name"]

    code, out = invoke("--data-dir", d, "inspect", "l2", "--scene", f"scene_blocks/{first}")
    assert code == 0, out
    assert f"scene_blocks/{first}" in out and "summary:" in out

    code, out = invoke("--data-dir", d, "inspect", "l3", "--user", "conv-26", "--no-navigation")
    assert code == 0, out
    assert "Caroline" in out and "Melanie" in out and "Scene navigation" not in out

    code, out = invoke("--data-dir", d, "inspect", "l3", "--format", "jsonl")
    persona = json.loads(out.splitlines()[0])
    assert persona["tenant"]["user_id"] == "conv-26" and persona["navigation"].startswith(
        "## Scene navigation"
    )


def test_inspect_l2_refuses_a_path_outside_the_scene_folder(tmp_path: Path, locomo_sample: Path) -> None:
    d = str(tmp_path / "data")
    invoke("--data-dir", d, "import", str(locomo_sample))
    code, out = invoke("--data-dir", d, "inspect", "l2", "--scene", "../persona.md")
    assert code == 1 and "not a scene path" in out
