"""The forgetting commands end to end on real files: ``forget`` refuses without ``--yes`` and
then erases; ``pin``, ``expire``, ``sweep`` and ``rebuild-scenes``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from memstrata import Memory
from memstrata.cli.main import app

runner = CliRunner()
ENV = {"MEMSTRATA_EMBEDDING__PROVIDER": "hashing"}
SEED = {
    "sessions": [
        {
            "sessionKey": "c",
            "userId": user,
            "conversations": [
                [
                    {"role": "user", "content": f"I am allergic to {word} pollen.", "name": user.title()},
                    {"role": "user", "content": f"I work as a {word} carpenter.", "name": user.title()},
                ]
            ],
        }
        for user, word in (("ida", "Frobnicle"), ("jon", "Quibbleton"))
    ]
}


def invoke(*args: str) -> tuple[int, str]:
    done = runner.invoke(app, list(args), env=ENV)
    return done.exit_code, " ".join(done.output.split())


def imported(tmp_path: Path) -> str:
    d = str(tmp_path / "d")
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED))
    assert invoke("--data-dir", d, "import", str(seed))[0] == 0
    return d


def test_forget_refuses_without_yes_then_erases_and_says_what_it_removed(tmp_path: Path) -> None:
    d = imported(tmp_path)
    code, out = invoke("--data-dir", d, "forget", "--user", "ida")
    assert code == 2 and "add --yes" in out
    with Memory.open(d, read_only=True) as mem:
        assert len(mem.messages(user_id="ida")) == 2
    code, out = invoke("--data-dir", d, "forget", "--user", "ida", "--yes")
    assert code == 0 and "forgot ida/default" in out and "removed 2 messages" in out
    assert "space reclaimed" in out
    with Memory.open(d, read_only=True) as mem:
        assert mem.messages(user_id="ida") == [] and len(mem.messages(user_id="jon")) == 2
    for path in Path(d).rglob("*"):
        assert not path.is_file() or b"frobnicle" not in path.read_bytes().lower(), path
    code, out = invoke("--data-dir", d, "forget", "--user", "ida", "--yes")
    assert code == 0 and "nothing stored for user 'ida'" in out


def test_pin_expire_sweep_and_rebuild_scenes(tmp_path: Path) -> None:
    d = imported(tmp_path)
    with Memory.open(d, read_only=True) as mem:
        pollen = next(a for a in mem.atoms(user_id="jon") if "pollen" in a.content)
    code, out = invoke("--data-dir", d, "pin", pollen.id, "--user", "jon")
    assert code == 0 and out.startswith(f"pinned {pollen.id}")
    code, out = invoke("--data-dir", d, "expire", pollen.id, "--user", "jon", "--at", "2001-01-01T00:00:00Z")
    assert code == 0 and "expires 2001-01-01 00:00 UTC" in out
    code, out = invoke("--data-dir", d, "sweep")
    assert code == 0 and "0 expired atoms" in out  # pinned
    invoke("--data-dir", d, "pin", pollen.id, "--user", "jon", "--unpin")
    code, out = invoke("--data-dir", d, "sweep")
    assert code == 0 and re.search(r"\b1 expired atoms\b", out)
    code, out = invoke("--data-dir", d, "rebuild-scenes", "--user", "jon")
    assert code == 0 and re.match(r"1 scenes: [a-z0-9-]+\.md", out)
    code, out = invoke("--data-dir", d, "expire", pollen.id, "--user", "jon")
    assert code == 2 and "exactly one of --at, --in-days or --never" in out
