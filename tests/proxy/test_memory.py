"""Memory through the proxy: recall reaches the upstream's prompt, capture stores each message
once, injection is bounded and stable, and the per-request switches work."""

from __future__ import annotations

import json
import threading
import time

import anthropic
import httpx
import openai
from openai.types.chat import ChatCompletionChunk

from tests.proxy.conftest import stored, stored_turns
from tests.support.live_server import LiveServer
from tests.support.llm_upstream import Reply, ScriptedUpstream


def _openai(server: LiveServer, session: str, **headers: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.url + "/proxy/openai/v1",
        api_key="sk-client",
        max_retries=0,
        default_headers={"x-memstrata-session": session, **headers},
    )


def test_a_fact_said_in_one_session_reaches_the_prompt_of_a_later_one(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    first = _openai(open_proxy, "trip-1")
    first.chat.completions.create(
        model="gpt-test",
        messages=[
            {"role": "user", "content": "My sister Ana moved to Lisbon last spring and keeps bees there."}
        ],
    )
    assert len(stored(open_proxy, "trip-1", want=2)) == 2
    later = _openai(open_proxy, "trip-2")
    later.chat.completions.create(
        model="gpt-test",
        messages=[
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Where does my sister Ana keep her bees now?"},
        ],
    )
    sent = upstream.requests[-1].json["messages"]
    assert sent[0]["content"].startswith("You are a helpful assistant.")
    assert "<relevant-memories>" in sent[1]["content"]
    assert "Lisbon" in sent[1]["content"]
    assert sent[1]["content"].endswith("Where does my sister Ana keep her bees now?")


def test_three_resends_store_each_message_once_and_clean(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    client = anthropic.Anthropic(
        base_url=open_proxy.url + "/proxy/anthropic", api_key="sk-ant-client", max_retries=0
    )
    said = ["I adopted a grey cat called Miso.", "Miso hates the vacuum cleaner.", "What should I feed Miso?"]
    answers = ["Lovely name!", "Many cats do.", "A quality wet food."]
    transcript: list[dict[str, str]] = []
    sessions = set()
    for text, answer in zip(said, answers, strict=True):
        upstream.enqueue(Reply(text=answer))
        transcript.append({"role": "user", "content": text})
        raw = client.messages.with_raw_response.create(
            model="claude-test",
            max_tokens=100,
            system="Be brief.",
            messages=transcript,  # type: ignore[arg-type]
        )
        sessions.add(raw.headers["x-memstrata-injected"].split("session=")[1])
        transcript.append({"role": "assistant", "content": raw.parse().content[0].text})  # type: ignore[union-attr]
    assert len(sessions) == 1  # derived from the system prompt and first message: one conversation
    got = stored_turns(open_proxy, sessions.pop(), want=6)
    assert got == [(m["role"], m["content"]) for m in transcript]


def test_recall_off_sends_the_clients_bytes_and_capture_off_stores_nothing(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    body = {"model": "gpt-test", "messages": [{"role": "user", "content": "Remember: I like green tea."}]}
    raw = json.dumps(body, separators=(",", ":")).encode()
    answer = httpx.post(
        open_proxy.url + "/proxy/openai/v1/chat/completions",
        content=raw,
        headers={
            "content-type": "application/json",
            "x-memstrata-recall": "off",
            "x-memstrata-capture": "off",
            "x-memstrata-session": "quiet",
        },
    )
    assert answer.status_code == 200
    assert upstream.requests[-1].body == raw
    assert answer.headers["x-memstrata-injected"].startswith("system=0; memories=0")
    status = httpx.get(open_proxy.url + "/v1/status").json()
    assert status["proxy"]["recall_skipped"] == 1
    assert status["proxy"]["capture_skipped"] == 1
    assert httpx.get(open_proxy.url + "/v1/messages", params={"session_key": "quiet"}).json() == []


def test_the_system_block_is_byte_identical_between_turns_and_cache_breakpoints_stay(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    httpx.put(open_proxy.url + "/v1/persona", json={"body": "Works as a beekeeper in Porto. Has two dogs."})
    client = anthropic.Anthropic(base_url=open_proxy.url + "/proxy/anthropic", api_key="k", max_retries=0)
    system = [{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}]
    transcript: list[dict[str, object]] = []
    for text in ("How are the bees doing in this weather?", "And what about my dogs?"):
        transcript.append(
            {
                "role": "user",
                "content": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}],
            }
        )
        reply = client.messages.create(model="c", max_tokens=50, system=system, messages=transcript)  # type: ignore[arg-type]
        transcript.append({"role": "assistant", "content": reply.content[0].text})  # type: ignore[union-attr]
    one, two = (r.json for r in upstream.requests[-2:])
    assert one["system"][0] == two["system"][0] == system[0]  # the client's block and breakpoint, untouched
    assert len(one["system"]) == 2 and one["system"][1] == two["system"][1]
    assert "beekeeper in Porto" in one["system"][1]["text"]
    assert "memory-tools-guide" not in one["system"][1]["text"]
    last = two["messages"][-1]["content"]
    assert last[-1] == {
        "type": "text",
        "text": "And what about my dogs?",
        "cache_control": {"type": "ephemeral"},
    }


def test_memories_stay_within_the_budget(home: object, upstream: ScriptedUpstream) -> None:
    from pathlib import Path

    from tests.proxy.conftest import proxy_settings

    assert isinstance(home, Path)
    with LiveServer(home, proxy=proxy_settings(upstream, memory_chars=300)) as server:
        client = _openai(server, "facts")
        for i in range(8):
            client.chat.completions.create(
                model="m",
                messages=[
                    {"role": "user", "content": f"Fact {i}: my neighbour Bruno owns {i + 2} red bicycles."}
                ],
            )
        stored(server, "facts", want=16)
        reply = _openai(server, "ask").chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "How many bicycles does Bruno own?"}]
        )
        memories = int(reply.headers["x-memstrata-injected"].split("memories=")[1].split(";")[0])
        assert 0 < memories <= 300
        text = upstream.requests[-1].json["messages"][-1]["content"]
        assert text.index("</relevant-memories>") < 300


def test_a_streamed_answer_is_stored_and_the_openai_system_prompt_stays_identical(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    httpx.put(open_proxy.url + "/v1/persona", json={"body": "Plays the cello in an amateur orchestra."})
    client = _openai(open_proxy, "cello")
    transcript: list[dict[str, str]] = [{"role": "system", "content": "You are a music tutor."}]
    for text, answer in (
        ("Which etudes should I practise?", "Try Popper's etudes"),
        ("And scales?", "Three octaves daily"),
    ):
        upstream.enqueue(Reply(text=answer))
        transcript.append({"role": "user", "content": text})
        stream = client.chat.completions.create(model="m", messages=transcript, stream=True)  # type: ignore[arg-type]
        said = "".join(
            c.choices[0].delta.content or ""
            for c in stream
            if isinstance(c, ChatCompletionChunk) and c.choices
        )
        transcript.append({"role": "assistant", "content": said})
    one, two = (r.json["messages"][0] for r in upstream.requests[-2:])
    assert one == two  # the prefix OpenAI caches is the same bytes both turns
    assert one["content"].startswith("You are a music tutor.\n\n<user-persona>")
    got = stored_turns(open_proxy, "cello", want=4)
    assert got == [(m["role"], m["content"]) for m in transcript[1:]]


def test_a_streams_prompt_is_stored_from_its_first_chunk_on_and_before_its_end(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    """The store's work stays out of the time to first token: nothing is stored while the
    upstream has not sent its first event, and the prompt is stored before the stream ends."""
    first_event = threading.Event()  # the upstream holds its first event until this is set
    upstream.enqueue(Reply(text="Saturdays", delay=1.0, gate=first_event))  # then one event a second
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "When is the market?"}]}
    url = open_proxy.url + "/proxy/openai/v1/chat/completions"
    with (
        httpx.Client() as client,
        client.stream("POST", url, json=body, headers={"x-memstrata-session": "market"}) as r,
    ):
        try:
            time.sleep(0.3)  # the status line is here, the first event held: a capture now would show
            assert open_proxy.app.state.proxy.stats.prompts_captured == 0
        finally:
            first_event.set()
        chunks = list(r.iter_bytes())
        assert open_proxy.app.state.proxy.stats.prompts_captured == 1  # before the stream ended
    assert b"Saturdays" in b"".join(chunks)
    got = stored_turns(open_proxy, "market", want=2)
    assert got == [
        ("user", "When is the market?"),
        ("assistant", "Saturdays"),
    ]


def test_an_answer_streamed_to_an_sdk_that_stops_at_its_final_event_is_stored(
    open_proxy: LiveServer, upstream: ScriptedUpstream
) -> None:
    """SDKs stop reading at the answer's final event (``[DONE]``, ``message_stop``) and close the
    connection, which can be before the upstream ends its response: the client has the whole
    answer, so it is stored. The upstream here keeps each response open a while after its last
    event, so the client always leaves first."""
    openai_client = _openai(open_proxy, "linger-openai")
    upstream.enqueue(Reply(text="Tuesdays and Thursdays", linger=1.0))
    stream = openai_client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "When do I climb?"}], stream=True
    )
    said = "".join(
        c.choices[0].delta.content or "" for c in stream if isinstance(c, ChatCompletionChunk) and c.choices
    )
    assert said == "Tuesdays and Thursdays"
    got = stored_turns(open_proxy, "linger-openai", want=2)
    assert got == [
        ("user", "When do I climb?"),
        ("assistant", "Tuesdays and Thursdays"),
    ]
    anthropic_client = anthropic.Anthropic(
        base_url=open_proxy.url + "/proxy/anthropic",
        api_key="k",
        max_retries=0,
        default_headers={"x-memstrata-session": "linger-anthropic"},
    )
    upstream.enqueue(Reply(text="At the harbour gym", linger=1.0))
    with anthropic_client.messages.stream(
        model="c", max_tokens=50, messages=[{"role": "user", "content": "Where do I climb?"}]
    ) as answer:
        assert answer.get_final_text() == "At the harbour gym"
    got = stored_turns(open_proxy, "linger-anthropic", want=2)
    assert got == [
        ("user", "Where do I climb?"),
        ("assistant", "At the harbour gym"),
    ]
