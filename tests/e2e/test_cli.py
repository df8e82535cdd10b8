"""The CLI end to end: real files, real SQLite, the installed command for the demo."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memstrata.cli.main import app

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
                        "content": "I'm flying to Tokyo on May 3 for a design conference.",
                        "timestamp": "2026-04-01T10:00:00Z",
                        "name": "Maya",
                    },
                    {
                        "role": "assistant",
                        "content": "Exciting! Which conference?",
                        "timestamp": 1775037605000,
                    },
                    {
                        "role": "user",
                        "content": "Config Asia. I love ramen, so I'll try Ichiran.",
                        "timestamp": "2026-04-01T10:01:00Z",
                        "name": "Maya",
                    },
                ]
            ],
        }
    ]
}


def invoke(*args: str) -> tuple[int, str]:
    r = runner.invoke(app, list(args), env={"MEMSTRATA_EMBEDDING__PROVIDER": "none"})
    return r.exit_code, r.output


def test_import_search_inspect_roundtrip(tmp_path: Path) -> None:
    f = tmp_path / "seed.json"
    f.write_text(json.dumps(SEED))
    d = str(tmp_path / "data")
    code, out = invoke("--data-dir", d, "import", str(f))
    assert code == 0, out
    assert "3 messages stored" in out
    code, out = invoke("--data-dir", d, "import", str(f))  # re-import changes nothing
    assert code == 0 and "0 messages stored, 3 already present" in out
    code, out = invoke("--data-dir", d, "search", "ramen", "--user", "maya", "--json")
    hits = json.loads(out)["hits"]
    assert code == 0 and hits and any("ramen" in h["content"] for h in hits)
    assert "L1" in {h["layer"] for h in hits}  # the ramen atom; it stands for its message
    cited = {i for h in hits if h["layer"] == "L1" for i in h["source_message_ids"]}
    assert not cited & {h["id"] for h in hits if h["layer"] == "L0"}
    assert [h["rank"] for h in hits] == sorted(h["rank"] for h in hits)
    code, out = invoke("inspect", "l0", "--data-dir", d, "--user", "maya", "--format", "jsonl")
    rows = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and [r["role"] for r in rows] == ["user", "assistant", "user"]
    code, out = invoke("--data-dir", d, "inspect", "l1", "--format", "json")
    assert code == 0 and all(a["source_message_ids"] for a in json.loads(out))
    code, out = invoke("--data-dir", d, "status", "--format", "json")
    assert code == 0 and json.loads(out)[0]["sessions"][0]["lag"] == 0


def test_import_without_processing_leaves_the_backlog_for_later(tmp_path: Path) -> None:
    f = tmp_path / "seed.json"
    f.write_text(json.dumps(SEED))
    d = str(tmp_path / "data")
    assert invoke("--data-dir", d, "import", str(f), "--no-process")[0] == 0
    _code, out = invoke("--data-dir", d, "status", "--format", "json")
    status = json.loads(out)[0]
    assert status["atoms"] == 0 and status["sessions"][0]["lag"] == 3


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        (
            {"sessions": [{"sessionKey": "s", "conversations": [[{"role": "robot", "content": "x"}]]}]},
            "sessions[0].conversations[0][0].role",
        ),
        ({"sessions": [{"conversations": []}]}, "sessions[0].sessionKey"),
        (
            [{"sessionKey": "s", "conversations": [[{"role": "user", "content": 5}]]}],
            "[0].conversations[0][0].content",
        ),
    ],
)
def test_import_validation_errors_name_the_failing_item(tmp_path: Path, bad: object, where: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    code, out = invoke("--data-dir", str(tmp_path / "d"), "import", str(f))
    assert code == 1
    assert where in out.replace("\n", "")


def test_import_of_invalid_json_is_a_clear_error(tmp_path: Path) -> None:
    f = tmp_path / "bad.json"
    f.write_text("{not json")
    code, out = invoke("--data-dir", str(tmp_path / "d"), "import", str(f))
    assert code == 1 and "not valid JSON" in out


def test_locomo_import_is_detected(tmp_path: Path, locomo_sample: Path) -> None:
    d = str(tmp_path / "data")
    code, out = invoke("--data-dir", d, "import", str(locomo_sample))
    assert code == 0, out
    code, out = invoke("--data-dir", d, "inspect", "l0", "--user", "conv-26", "--format", "jsonl", "-n", "2")
    first = json.loads(out.splitlines()[0])
    assert first["id"] == "conv-26/D1:1" and first["name"] == "Caroline"


def test_demo_runs_from_the_installed_command(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "memstrata"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MEMSTRATA_HOME": str(tmp_path / "home")}
    r = subprocess.run([str(exe), "demo"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "L1 memory atoms" in r.stdout and "Lisbon" in r.stdout
    # each atom beside the scene file holding it, the files the L2 section lists
    shown = set(re.findall(r"\[(?:persona|episodic|instruction) · ([\w-]+\.md)\]", r.stdout))
    assert shown and all(f"scene_blocks/{name}" in r.stdout for name in shown)
    assert not (tmp_path / "home").exists()  # the demo works in a temporary folder


def test_every_cli_command_is_documented_with_help() -> None:
    import typer.main

    docs = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    group = typer.main.get_group(app)
    names: list[str] = []
    for name, cmd in group.commands.items():
        sub = getattr(cmd, "commands", None)
        if sub:
            names += [f"{name} {s}" for s in sub]
            assert all(c.help for c in sub.values()), name
        else:
            names.append(name)
            assert cmd.help, name
    missing = [n for n in names if f"memstrata {n}" not in docs]
    assert not missing, f"undocumented in docs/cli.md: {missing}"


def test_repair_rewrites_a_broken_mirror_and_restores_an_unreadable_scene(tmp_path: Path) -> None:
    d = tmp_path / "d"
    f = tmp_path / "seed.json"
    f.write_text(json.dumps(SEED))
    assert invoke("--data-dir", str(d), "import", str(f))[0] == 0
    more = {
        "role": "user",
        "name": "Maya",
        "content": "I adopted a cat named Miso.",
        "timestamp": 1775037700000,
    }
    f.write_text(
        json.dumps({"sessions": [{"sessionKey": "cat", "userId": "maya", "conversations": [[more]]}]})
    )
    assert invoke("--data-dir", str(d), "import", str(f))[0] == 0  # its L2 run backed the scenes up
    (mirror,) = (d / "conversations").glob("*.jsonl")
    first = mirror.read_text().splitlines()[0]
    mirror.write_text(mirror.read_text() + first + "\n")
    scene = next((d / "profiles" / "u=maya,a=default" / "scene_blocks").glob("*.md"))
    scene.write_bytes(b"\x00\x01 not a scene")

    code, out = invoke("--data-dir", str(d), "repair")
    assert code == 0, out
    lines = out.strip().splitlines()
    assert lines[0] == (
        f"conversations/ rewritten from the database on open (lines out of order near the end of {mirror.name})"
    )
    assert (
        f"scene_blocks/{scene.name} is unreadable" in lines[1] and "restored from backup scenes-" in lines[1]
    )
    snapshot = lines[1].split("restored from backup ")[1].split(",")[0]
    profile = scene.parent.parent
    assert scene.read_bytes() == (profile / ".backup" / snapshot / scene.name).read_bytes()
    assert len(mirror.read_text().splitlines()) == 4
    code, out = invoke("--data-dir", str(d), "repair")
    assert code == 0 and out.startswith("nothing to repair")
    code, out = invoke("--data-dir", str(tmp_path / "none"), "repair")
    assert code == 1 and "no memstrata data directory" in out
    assert not (tmp_path / "none").exists()


def test_search_filter_keeps_hits_whose_metadata_matches(tmp_path: Path) -> None:
    said = [
        ("I love ramen from Ichiran.", {"app": "crm", "ticket": 7}),
        ("Ramen with extra garlic is my favourite.", {"app": "erp"}),
    ]
    conversation = [
        {"role": "user", "content": text, "name": "Maya", "metadata": meta} for text, meta in said
    ]
    seed = {"sessions": [{"sessionKey": "food", "userId": "maya", "conversations": [conversation]}]}
    f = tmp_path / "seed.json"
    f.write_text(json.dumps(seed))
    d = str(tmp_path / "data")
    assert invoke("--data-dir", d, "import", str(f))[0] == 0
    for options, apps in [
        ((), {"crm", "erp"}),
        (("--filter", "app=crm"), {"crm"}),
        (("--filter", "ticket=7"), {"crm"}),  # a number
        (("--filter", 'ticket="7"'), set()),  # the text "7"
        (("--filter", "app=erp", "--filter", "app=crm"), {"crm", "erp"}),  # any of a key's values
    ]:
        code, out = invoke(
            "--data-dir", d, "search", "ramen", "--user", "maya", "--json", "--min-score", "0", *options
        )
        assert code == 0, out
        assert {h["metadata"]["app"] for h in json.loads(out)["hits"]} == apps, options
    code, out = invoke("--data-dir", d, "search", "ramen", "--filter", "app")
    assert code != 0 and "KEY=VALUE" in out
