"""Each example of docs/integrations.md runs as written, offline, in a directory of its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
FRAMEWORKS = ["langgraph", "agents", "pydantic_ai"]


def test_there_is_one_example_per_framework() -> None:
    assert len(BLOCKS) == len(FRAMEWORKS)
    for block, framework in zip(BLOCKS, FRAMEWORKS, strict=True):
        assert f"from {framework}" in block


@pytest.mark.parametrize(("i", "framework"), list(enumerate(FRAMEWORKS)))
def test_the_example_runs(i: int, framework: str, tmp_path: Path) -> None:
    pytest.importorskip(framework)
    script = tmp_path / f"example_{framework}.py"
    script.write_text(BLOCKS[i])
    env = {**os.environ, "MEMSTRATA_EMBEDDING__PROVIDER": "hashing", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, script.name], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert len(list(tmp_path.iterdir())) > 1  # it wrote its memory where it said
