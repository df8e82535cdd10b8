"""Who a proxied request acts for: scoped keys in gateway mode never reach each other's memory,
and pass-through mode wants the memstrata key when the server has one."""

from __future__ import annotations

import time
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

from memstrata.gateway.access import ADMIN, Principal
from tests.proxy.conftest import proxy_settings, stored
from tests.support.live_server import LiveServer
from tests.support.llm_upstream import ScriptedUpstream

ADMIN_KEY = "admin-key"


class TwoScopedKeys:
    """A key ring with the admin key and one key per tenant (what scoped keys give)."""

    required = True

    async def principal_for(self, token: str) -> Principal | None:
        keys = {
            ADMIN_KEY: ADMIN,
            "key-alice": Principal("alice", tenants=(("alice", None),)),
            "key-bob": Principal("bob", tenants=(("bob", None),)),
        }
        return keys.get(token)


def test_two_scoped_keys_never_see_each_others_memory(home: Path, upstream: ScriptedUpstream) -> None:
    settings = proxy_settings(upstream, openai_api_key="sk-provider-held")
    with LiveServer(home, api_key=ADMIN_KEY, proxy=settings) as server:
        server.app.state.keyring = TwoScopedKeys()

        def client(key: str, session: str) -> openai.OpenAI:
            return openai.OpenAI(
                base_url=server.url + "/proxy/openai/v1",
                api_key=key,
                max_retries=0,
                default_headers={"x-memstrata-session": session},
            )

        client("key-alice", "a1").chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "My locker code is 4711 and my dentist is Dr Okafor."}],
        )
        assert upstream.requests[-1].headers["authorization"] == "Bearer sk-provider-held"
        assert len(stored(server, "a1", want=2, user="alice")) == 2
        client("key-bob", "b1").chat.completions.create(
            model="m", messages=[{"role": "user", "content": "What is my locker code and who is my dentist?"}]
        )
        assert "4711" not in upstream.requests[-1].body.decode()
        assert "Okafor" not in upstream.requests[-1].body.decode()
        client("key-alice", "a2").chat.completions.create(
            model="m", messages=[{"role": "user", "content": "What is my locker code and who is my dentist?"}]
        )
        assert "4711" in upstream.requests[-1].body.decode()
        with pytest.raises(openai.PermissionDeniedError):
            openai.OpenAI(
                base_url=server.url + "/proxy/openai/v1",
                api_key="key-bob",
                max_retries=0,
                default_headers={"x-memstrata-user-id": "alice"},
            ).chat.completions.create(model="m", messages=[{"role": "user", "content": "locker code?"}])
        with pytest.raises(openai.AuthenticationError):
            client("sk-not-ours", "x").chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )
        time.sleep(0.2)
        assert stored(server, "b1", want=2, user="bob")[0]["content"].startswith("What is my locker code")


def test_pass_through_mode_wants_the_memstrata_key_and_forwards_the_provider_key(
    home: Path, upstream: ScriptedUpstream
) -> None:
    with LiveServer(home, api_key=ADMIN_KEY, proxy=proxy_settings(upstream)) as server:
        base = server.url + "/proxy/anthropic"
        with pytest.raises(anthropic.AuthenticationError):
            anthropic.Anthropic(base_url=base, api_key="sk-ant-users-own", max_retries=0).messages.create(
                model="c", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
            )
        assert upstream.requests == []
        anthropic.Anthropic(
            base_url=base,
            api_key="sk-ant-users-own",
            max_retries=0,
            default_headers={"x-memstrata-key": ADMIN_KEY},
        ).messages.create(model="c", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
        sent = upstream.requests[-1].headers
        # The client's key, in whichever header its SDK puts it, goes upstream unchanged.
        assert "sk-ant-users-own" in (sent.get("x-api-key") or sent["authorization"])
        assert not any(name.startswith("x-memstrata") for name in sent)
        denied = httpx.get(base + "/v1/models")
        assert denied.status_code == 401 and denied.json()["type"] == "error"
