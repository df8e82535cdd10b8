"""``memstrata migrate``: a processed memory copied from a data directory to PostgreSQL and back,
verified per layer; the copy searches alike and its pipeline resumes where the source stopped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memstrata import Memory
from memstrata.cli.main import app
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.interchange import parse_import
from tests.conftest import LOCOMO

pytest.importorskip("psycopg")

EMBED = HashingEmbedder(64)
QUESTIONS = ["When did Caroline go to the support group?", "What did Melanie paint?", "adoption agencies"]


@pytest.fixture
def processed_dir(locomo_sample: Path, tmp_path: Path) -> Path:
    """A data directory with the first two LoCoMo sessions through L3, vectors included, plus a
    session whose last messages are not extracted yet."""
    home = tmp_path / "source"
    with Memory.open(home, embedder=EMBED) as mem:
        mem.import_sessions(parse_import(json.loads(locomo_sample.read_text()), "locomo"))
        mem.capture(
            [{"role": "user", "content": "I bought a red kayak today.", "id": "late-1"}],
            session_key="late",
            user_id="conv-26",
        )
        mem.close(flush=False)
    return home


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"MEMSTRATA_EMBEDDING__PROVIDER": "none"})
    return result.exit_code, result.output


def hits(location: str | Path) -> list[list[str]]:
    with Memory.open(location, read_only=True, embedder=EMBED) as mem:
        return [
            [h.id for h in mem.search(q, user_id="conv-26", layers=("L1", "L0"), limit=8)] for q in QUESTIONS
        ]


def test_a_memory_goes_to_postgres_and_back_verified(
    processed_dir: Path, postgres_url: str, tmp_path: Path
) -> None:
    if not LOCOMO.exists():
        pytest.skip("LoCoMo dev set not present")
    code, out = run("migrate", "--from", str(processed_dir), "--to", postgres_url)
    assert code == 0, out
    lines = [ln for ln in out.splitlines() if " -> " in ln]
    assert len(lines) == 9 and all(ln.endswith(" ok") for ln in lines), out
    assert "L2 scenes: 0 -> 0" not in out and "L1 atoms: 0" not in out  # something was copied
    assert hits(postgres_url) == hits(processed_dir)

    back = tmp_path / "back"
    code, out = run("migrate", "--from", postgres_url, "--to", str(back))
    assert code == 0, out
    assert hits(back) == hits(processed_dir)

    code, out = run("migrate", "--from", str(processed_dir), "--to", postgres_url)
    assert code == 1 and "already holds a memory" in out  # never into a memory

    with Memory.open(postgres_url, embedder=EMBED) as mem:  # the pipeline resumes, no re-extraction
        before = len(mem.atoms(user_id="conv-26", include_superseded=True, limit=5000))
        mem.end_session("late", user_id="conv-26")
        report = mem.run_all()
        after = mem.atoms(user_id="conv-26", include_superseded=True, limit=5000)
    assert report.l1 == 0  # every backlog was extracted already, the new session by end_session
    assert any("kayak" in a.content for a in after)
    assert len(after) == before + sum(1 for a in after if "late-1" in a.source_message_ids)
