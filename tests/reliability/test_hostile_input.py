"""Hostile import files: a clear one-line error and nothing stored, or bounded memory.

The import runs as the real command in a child process, so its exit code, its output and its
peak RSS are the user's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.errors import InputError
from memstrata.models import json_input

# Runs ``memstrata ARGS...`` in this process, then prints its peak RSS (KiB) as the last line.
# VmHWM, not getrusage: Linux carries the maxrss of the forked parent (pytest) across exec.
RUN_CLI = """
import re, sys
from memstrata.cli.main import app
try:
    app(sys.argv[1:], prog_name="memstrata")
except SystemExit as exc:
    code = exc.code or 0
status = open("/proc/self/status").read()
print(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1), file=sys.stderr)
sys.exit(code)
"""
BIG = 50_000_000  # characters in one message
MAX_RSS_MB = 400  # measured: about 200 (944 before is_noise read only the first words)


def memstrata(*args: str) -> tuple[int, str, int]:
    """Exit code, output (stdout and stderr) and peak RSS in MB of ``memstrata ARGS``."""
    env = {**os.environ, "MEMSTRATA_EMBEDDING__PROVIDER": "hashing", "COLUMNS": "200"}
    proc = subprocess.run(
        [sys.executable, "-c", RUN_CLI, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    *err, rss = proc.stderr.splitlines()
    return proc.returncode, proc.stdout + "\n".join(err), int(rss) // 1024


def test_a_deeply_nested_file_is_a_one_line_error_and_stores_nothing(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    code, out, _ = memstrata("--data-dir", str(tmp_path / "data"), "import", str(deep))
    assert code == 1
    assert out.strip() == f"error: {deep}: arrays and objects nest more than 100 levels deep"
    assert not (tmp_path / "data" / "memstrata.db").exists()


@pytest.mark.parametrize("depth", [101, 5_000, 100_000])
def test_nesting_past_the_limit_is_an_input_error(depth: int) -> None:
    with pytest.raises(InputError, match="nest more than 100 levels deep"):
        json_input.loads("[" * depth + "]" * depth, "file.json")
    assert json_input.loads("[" * 100 + "]" * 100) is not None


def test_invalid_bytes_are_an_input_error() -> None:
    with pytest.raises(InputError, match=r"^f\.json: not valid JSON"):
        json_input.loads(b'{"a": "\xff"}', "f.json")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak RSS from /proc")
def test_a_50_mb_message_is_stored_cut_with_bounded_memory(tmp_path: Path) -> None:
    words = ("lorem ipsum dolor sit amet " * (BIG // 27 + 1))[: BIG - 1] + "."
    seed = {"sessions": [{"sessionKey": "k", "conversations": [[{"role": "user", "content": words}]]}]}
    source = tmp_path / "big.json"
    source.write_text(json.dumps(seed))
    del words, seed
    home = tmp_path / "data"
    code, out, rss = memstrata("--data-dir", str(home), "import", str(source))
    assert code == 0, out
    assert f"cut to 200000 characters (it had {BIG})" in out
    assert rss < MAX_RSS_MB, f"peak RSS {rss} MB"
    with Memory.open(home, embedder=None, read_only=True) as mem:
        [stored] = mem.messages(limit=5)
    assert len(stored.content) < 200_200 and stored.content.endswith("characters]")
