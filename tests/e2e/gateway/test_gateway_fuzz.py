"""Property-based fuzzing of the served OpenAPI schema (schemathesis over hypothesis), bounded:
every operation gets a few generated requests, valid and invalid, and none may answer 5xx.

The schema is taken from the app factory at collection time (the server starts later) and
checked to be the one the live server serves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import schemathesis
from hypothesis import HealthCheck, settings

from memstrata.gateway.app import create_app
from memstrata.settings import load_settings
from tests.e2e.gateway.conftest import KEY
from tests.support.live_server import LiveServer

EXAMPLES = 12  # per operation


async def _never_opened() -> Any:
    raise AssertionError("collection only reads the schema")


OPENAPI = create_app(load_settings(Path("unused")), _never_opened).openapi()
schema = schemathesis.openapi.from_dict(OPENAPI)


def test_the_fuzzed_schema_is_the_served_one(server: LiveServer) -> None:
    served = httpx.get(server.url + "/openapi.json", headers=server.headers()).json()
    assert served == OPENAPI


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_no_request_gets_a_5xx(case: Any, server: LiveServer) -> None:
    response = case.call(base_url=server.url, headers={"authorization": f"Bearer {KEY}"}, timeout=30)
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:500]}"
    )
