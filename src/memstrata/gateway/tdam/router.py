"""All TDAM-compatible routes on one router: v1 at the root, the data plane at ``/v3`` (and at
``/v2``, where TDAM also serves it, counts excepted), ``/v2/pipeline/status``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter

from memstrata.gateway.tdam import atomic, conversation, legacy, profile

router = APIRouter(tags=["TDAM compatible"])

router.add_api_route("/health", legacy.health, methods=["GET"])
_V1: dict[str, Any] = {
    "/recall": legacy.recall,
    "/capture": legacy.capture,
    "/search/memories": legacy.search_memories,
    "/search/conversations": legacy.search_conversations,
    "/session/end": legacy.session_end,
    "/seed": legacy.seed,
}
for _path, _endpoint in _V1.items():
    router.add_api_route(_path, _endpoint, methods=["POST"])

_GROUPS: Mapping[str, Mapping[str, Any]] = {
    "conversation": conversation.ROUTES,
    "atomic": atomic.ROUTES,
    "scenario": profile.SCENARIO,
    "core": profile.CORE,
}
for _group, _routes in _GROUPS.items():
    for _name, _endpoint in _routes.items():
        for _version in ("v3", "v2") if _name != "count" else ("v3",):
            router.add_api_route(
                f"/{_version}/{_group}/{_name}",
                _endpoint,
                methods=["POST"],
                operation_id=f"tdam_{_version}_{_group}_{_name}",
            )
for _method in ("GET", "POST"):
    router.add_api_route(
        "/v2/pipeline/status",
        legacy.pipeline_status,
        methods=[_method],
        operation_id=f"tdam_v2_pipeline_status_{_method.lower()}",
    )
