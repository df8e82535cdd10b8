"""Lossless forwarding: what the upstream sends reaches the client as sent (whole or streamed,
sync or async SDKs), fields memstrata does not touch reach the upstream unchanged, errors pass
through, streams are never buffered and a client that leaves cancels the upstream."""

from __future__ import annotations

import json
import time
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.proxy.conftest import stored_turns, wait_for
from tests.support.live_server import LiveServer
from tests.support.llm_upstream import Reply, ScriptedUpstream, chat_body, message_body, response_body


def _oai(server: LiveServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/proxy/openai/v1", api_key="sk-client", max_retries=0)


def _ant(server: LiveServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url + "/proxy/anthropic", api_key="sk-ant", max_retries=0)


def test_chat_answers_arrive_as_sent_with_tool_calls_usage_and_ids(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    upstream.enqueue(Reply(text="Checking the weather.", tool="get_weather", usage=(120, 9)))
    raw = _oai(open_proxy).chat.completions.with_raw_response.create(
        model="gpt-test", messages=[{"role": "user", "content": "Weather in Paris?"}]
    )
    got = raw.parse()
    assert got.model_dump(exclude_unset=True) == chat_body(
        1, "gpt-test", Reply(text="Checking the weather.", tool="get_weather", usage=(120, 9))
    )
    assert raw.headers["x-request-id"] == "req_up_1"  # the upstream's id, not the gateway's
    assert raw.headers["x-ratelimit-remaining-requests"] == "99"


def test_chat_streams_arrive_event_by_event(open_proxy: LiveServer, upstream: ScriptedUpstream) -> None:
    upstream.enqueue(Reply(text="one two three", tool="lookup"))
    chunks = list(
        _oai(open_proxy).chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "Count"}], stream=True
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "one two three"
    args = "".join(
        (t.function.arguments or "")
        for c in chunks
        if c.choices
        for t in c.choices[0].delta.tool_calls or ()
        if t.function
    )
    assert json.loads(args) == {"city": "Paris"}
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 18


async def test_responses_whole_and_streamed_with_the_async_sdk(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    client = openai.AsyncOpenAI(base_url=open_proxy.url + "/proxy/openai/v1", api_key="sk", max_retries=0)
    upstream.enqueue(Reply(text="Bonjour."), Reply(text="Hello there friend"))
    whole = await client.responses.create(
        model="gpt-r", input="Say hello in French", instructions="Be short."
    )
    assert whole.model_dump(exclude_unset=True) == response_body(1, "gpt-r", Reply(text="Bonjour."))
    assert whole.output_text == "Bonjour."
    sent = upstream.requests[-1].json
    assert sent["instructions"].startswith("Be short.")
    deltas = []
    async with await client.responses.create(model="gpt-r", input="Say hello", stream=True) as stream:
        async for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
    assert "".join(deltas) == "Hello there friend"
    await client.close()


async def test_anthropic_whole_and_streamed_with_the_async_sdk(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    client = anthropic.AsyncAnthropic(
        base_url=open_proxy.url + "/proxy/anthropic", api_key="sk-ant", max_retries=0
    )
    upstream.enqueue(
        Reply(text="Let me look.", tool="search_web", usage=(50, 5)), Reply(text="streamed words here")
    )
    raw = await client.messages.with_raw_response.create(
        model="claude-t", max_tokens=64, messages=[{"role": "user", "content": "Find cafes"}]
    )
    got = await raw.parse()
    assert got.model_dump(exclude_unset=True) == message_body(
        1, "claude-t", Reply(text="Let me look.", tool="search_web", usage=(50, 5))
    )
    assert raw.headers["request-id"] == "req_up_1"
    async with client.messages.stream(
        model="claude-t", max_tokens=64, messages=[{"role": "user", "content": "Go"}]
    ) as stream:
        text = "".join([t async for t in stream.text_stream])
        final = await stream.get_final_message()
    assert text == "streamed words here"
    assert final.usage.output_tokens == 7
    await client.close()


def test_unknown_and_untouched_fields_arrive_upstream_unchanged(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    body: dict[str, Any] = {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Sys."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Look"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            },
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "f", "parameters": {"type": "object", "properties": {}}},
            }
        ],
        "tool_choice": "auto",
        "response_format": {"type": "json_object"},
        "metadata": {"team": "a"},
        "temperature": 0.7,
        "x_vendor_extension": {"nested": [1, 2.5, None, True], "ünïcode": "日本"},
    }
    _oai(open_proxy).chat.completions.create(
        **{k: v for k, v in body.items() if k != "x_vendor_extension"},
        extra_body={"x_vendor_extension": body["x_vendor_extension"]},
    )
    sent = upstream.requests[-1].json
    for key in (
        "tools",
        "tool_choice",
        "response_format",
        "metadata",
        "temperature",
        "x_vendor_extension",
        "model",
    ):
        assert sent[key] == body[key]
    image = sent["messages"][-1]["content"][-1]
    assert image == body["messages"][1]["content"][1]
    assert sent["messages"][0]["content"].startswith("Sys.")


def test_anthropic_thinking_server_tools_and_unknown_fields_pass(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    extra = {
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 2}],
        "metadata": {"user_id": "u-1"},
        "x_future_field": {"a": [1, {"b": None}]},
    }
    _ant(open_proxy).messages.create(
        model="c", max_tokens=10, messages=[{"role": "user", "content": "hi"}], extra_body=extra
    )
    sent = upstream.requests[-1].json
    for key, value in extra.items():
        assert sent[key] == value


def test_a_429_with_retry_after_passes_through(open_proxy: LiveServer, upstream: ScriptedUpstream) -> None:
    upstream.enqueue(
        Reply(status=429, headers={"retry-after": "7"}), Reply(status=429, headers={"retry-after": "3"})
    )
    with pytest.raises(openai.RateLimitError) as oai_err:
        _oai(open_proxy).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert oai_err.value.response.headers["retry-after"] == "7"
    assert oai_err.value.body == {
        "message": "scripted 429",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
    with pytest.raises(anthropic.RateLimitError) as ant_err:
        _ant(open_proxy).messages.create(
            model="c", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
        )
    assert ant_err.value.response.headers["retry-after"] == "3"


def test_other_paths_pass_through_with_no_memory(open_proxy: LiveServer, upstream: ScriptedUpstream) -> None:
    assert [m.id for m in _oai(open_proxy).models.list()] == ["scripted-1"]
    count = _ant(open_proxy).messages.count_tokens(model="c", messages=[{"role": "user", "content": "hello"}])
    assert count.input_tokens == 42
    assert upstream.requests[-1].path == "/v1/messages/count_tokens"
    assert "<relevant-memories>" not in upstream.requests[-1].body.decode()


def test_an_unreachable_upstream_is_a_502_in_the_providers_shape(home: Any) -> None:
    dead = "http://127.0.0.1:9"  # discard port: nothing listens
    with LiveServer(home, proxy={"openai_url": dead + "/v1", "anthropic_url": dead}) as server:
        with pytest.raises(openai.APIStatusError) as oai_err:
            _oai(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert oai_err.value.status_code == 502
        assert oai_err.value.body["code"] == "upstream_unreachable"  # type: ignore[index]
        with pytest.raises(anthropic.APIStatusError) as ant_err:
            _ant(server).messages.create(
                model="c", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
            )
        assert ant_err.value.status_code == 502
        assert ant_err.value.body["type"] == "error"  # type: ignore[index]
        assert httpx.get(server.url + "/v1/status").json()["proxy"]["upstream_unreachable"] == 2


def test_a_compressed_answer_reaches_the_client_decoded_and_is_stored(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    # The upstream compresses (providers' edges do): the client gets the decoded body, with no
    # content-encoding left to make it decode twice, and the tap reads the stream's events.
    upstream.enqueue(Reply(text="Plain words.", gzip=True), Reply(text="one two three", gzip=True))
    client = _oai(open_proxy)
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "Whole, zipped?"}]
    )
    assert raw.parse().choices[0].message.content == "Plain words."
    assert "content-encoding" not in raw.headers
    chunks = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "Streamed, zipped?"}],
        stream=True,
        extra_headers={"x-memstrata-session": "zipped"},
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "one two three"
    got = stored_turns(open_proxy, "zipped", want=2)
    assert got == [
        ("user", "Streamed, zipped?"),
        ("assistant", "one two three"),
    ]


def test_an_upstream_breaking_off_its_answer_is_a_502_or_a_stream_ended_where_it_broke(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    upstream.enqueue(Reply(cut_after=0))
    with pytest.raises(openai.APIStatusError) as whole:
        _oai(open_proxy).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert whole.value.status_code == 502
    assert whole.value.body["code"] == "upstream_broken"  # type: ignore[index]
    upstream.enqueue(Reply(text="one two three four", cut_after=3))
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "count"}]}
    with httpx.stream("POST", open_proxy.url + "/proxy/openai/v1/chat/completions", json=body) as r:
        assert r.status_code == 200
        got = b"".join(r.iter_bytes())  # ends: the proxy does not hang on a broken upstream
    assert b'"one "' in got and b'"two "' in got and b"four" not in got and b"[DONE]" not in got
    proxy = httpx.get(open_proxy.url + "/v1/status").json()["proxy"]
    assert proxy["upstream_broken"] == 2
    assert proxy["captured"] == 0  # a broken answer is not the turn's answer


def test_a_stream_is_never_buffered(open_proxy: LiveServer, upstream: ScriptedUpstream) -> None:
    upstream.enqueue(Reply(text="a b c d e f", delay=0.15))
    first_at = None
    with _ant(open_proxy).messages.stream(
        model="c", max_tokens=9, messages=[{"role": "user", "content": "go"}]
    ) as stream:
        for _ in stream.text_stream:
            first_at = first_at or time.monotonic()
    rec = upstream.requests[-1]
    # The client may hold the last event before the upstream's thread has noted its own end.
    assert first_at is not None and wait_for(lambda: rec.finished is not None, 5)
    assert rec.finished is not None
    assert rec.finished - first_at > 0.6  # the first words were read while the upstream still wrote


def test_a_client_leaving_mid_stream_cancels_the_upstream(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    upstream.enqueue(Reply(text=" ".join(f"w{i}" for i in range(200)), delay=0.05))
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "long please"}]}
    with (
        httpx.Client() as client,
        client.stream("POST", open_proxy.url + "/proxy/openai/v1/chat/completions", json=body) as r,
    ):
        for _ in r.iter_bytes():
            break
    assert wait_for(lambda: upstream.requests[-1].finished is not None, 10)  # noted after ``cancelled``
    rec = upstream.requests[-1]
    assert rec.cancelled and rec.finished is not None
    assert rec.finished - rec.started < 5  # 200 events would take 10 s
    status = httpx.get(open_proxy.url + "/v1/status").json()["proxy"]
    assert status["client_disconnects"] == 1


def test_cookies_an_upstream_sets_reach_their_client_and_no_other_request(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    # Providers' edges set cookies (``__cf_bm``): a client that keeps them sends them back itself.
    # The proxy's pooled upstream client must not keep them and attach them to every later
    # request, whoever makes it (a transparent proxy adds nothing; tenants stay unlinkable).
    upstream.enqueue(Reply(headers={"set-cookie": "__cf_bm=tenant-a; Path=/; HttpOnly"}))
    raw = _oai(open_proxy).chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "hi"}]
    )
    assert raw.headers["set-cookie"] == "__cf_bm=tenant-a; Path=/; HttpOnly"
    for ask in (
        lambda: _oai(open_proxy).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        ),
        lambda: _oai(open_proxy).models.list(),
        lambda: _ant(open_proxy).messages.create(
            model="c", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
        ),
    ):
        ask()
        assert "cookie" not in upstream.requests[-1].headers
    httpx.post(
        open_proxy.url + "/proxy/openai/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        headers={"cookie": "mine=1"},
    ).raise_for_status()
    assert upstream.requests[-1].headers["cookie"] == "mine=1"  # the client's own, as it sent it
