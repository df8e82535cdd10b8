"""The console's URLs of a tenant: the user in the path, the agent as ``?agent=``."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from memstrata.models import DEFAULT, Tenant


def tenant_url(t: Tenant, tail: str = "", **query: str | int | None) -> str:
    """A console URL of tenant ``t`` (the ``agent`` parameter omitted for the default agent), so
    every page is bookmarkable; empty query values are left out."""
    params = {k: v for k, v in query.items() if v not in (None, "")}
    if t.agent_id != DEFAULT:
        params = {"agent": t.agent_id, **params}
    path = f"/ui/t/{quote(t.user_id, safe='')}{tail}"
    return path + (f"?{urlencode(params)}" if params else "")
