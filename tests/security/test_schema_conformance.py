"""A bounded schemathesis run (its command line, ``--checks all``) against a real server: no
5xx, no status or header the schema does not declare, no response unlike its schema.

Left out: ``positive_data_acceptance`` (ST202), because some rules are beyond JSON Schema and
refused as invalid input on purpose (a scene name must be a lowercase ``.md`` file name, a time
must be ISO 8601, a delete needs ids or sessions). The run is deterministic and takes seconds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.security.conftest import ADMIN_KEY
from tests.support.live_server import LiveServer

EXAMPLES = 3  # per operation


def test_schemathesis_with_every_check_finds_nothing(tmp_path: Path) -> None:
    # schemathesis sends a bad key to every operation and wants its 401, not the 429 that slows a
    # client past a few failures (tests/security/test_console_hardening.py tests that).
    with LiveServer(tmp_path / "data", api_key=ADMIN_KEY, server={"free_key_failures": 100_000}) as live:
        run = subprocess.run(
            [
                sys.executable,  # the command line of the installed schemathesis, in this venv
                "-c",
                "import sys; from schemathesis.cli import schemathesis; sys.exit(schemathesis())",
                "run",
                f"{live.url}/openapi.json",
                "--checks",
                "all",
                "--exclude-checks",
                "positive_data_acceptance",
                "--phases",
                "examples,fuzzing",
                "--max-examples",
                str(EXAMPLES),
                "--generation-deterministic",
                "--header",
                f"Authorization: Bearer {ADMIN_KEY}",
                "--no-color",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-2000:]
