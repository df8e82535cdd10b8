"""The host turn lifecycle through a real server: a host that sends its whole transcript every
turn (and sometimes twice) stores each message once, cleanly."""

from __future__ import annotations

from typing import Any

import httpx

T0 = 1_772_359_200_000  # 2026-03-01T10:00:00Z, epoch ms


def committed(http: httpx.Client, user: str, transcript: list[dict[str, Any]], session: str = "host") -> Any:
    r = http.post(
        "/v1/turns/committed", json={"messages": transcript, "session_key": session, "user_id": user}
    )
    assert r.status_code == 200, r.text
    return r.json()


def before(http: httpx.Client, user: str, prompt: str, length: int | None, session: str = "host") -> Any:
    body = {"prompt": prompt, "session_key": session, "transcript_length": length, "user_id": user}
    r = http.post("/v1/turns/before-prompt", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def stored(http: httpx.Client, user: str) -> list[str]:
    return [m["content"] for m in http.get("/v1/messages", params={"user_id": user}).json()]


def test_the_whole_transcript_sent_three_times_stores_each_message_once(
    http: httpx.Client, user: str
) -> None:
    transcript: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful assistant."}]
    turns = [
        ("I just adopted a cat named Miso.", "Congratulations on Miso!"),
        ("Miso likes to sleep on my keyboard.", "Cats love warm keyboards."),
        ("What is my cat named?", "Your cat is called Miso."),
    ]
    injected = 0
    for prompt, reply in turns:
        recall = before(http, user, prompt, len(transcript))
        injected += bool(recall["prepend_context"])
        # The host pastes recall's context into the user's message, as hosts do.
        polluted = "\n\n".join(
            p for p in (recall["prepend_context"], f"[Tue 2026-03-03 10:00 UTC] {prompt}") if p
        )
        transcript += [{"role": "user", "content": polluted}, {"role": "assistant", "content": reply}]
        results = [committed(http, user, transcript) for _ in range(3)]
        assert len(results[0]["stored"]) == 2
        assert results[1]["stored"] == [] and results[2]["stored"] == []
    assert injected >= 1  # at least one user message really carried recalled context
    expected = [m for pair in turns for m in pair]
    assert stored(http, user) == expected  # each once, in order, with no injected context or stamp


def test_a_polluted_user_message_is_stored_clean(http: httpx.Client, user: str) -> None:
    http.post(
        "/v1/capture",
        json={"messages": [{"role": "user", "content": "My sister Ana lives in Braga."}], "user_id": user},
    )
    http.post("/v1/sessions/end", json={"user_id": user})
    recall = before(http, user, "Where does Ana live?", 0, session="clean")
    assert "Braga" in recall["prepend_context"]
    polluted = f"{recall['system_context']}\n\n{recall['prepend_context']}\n\nWhere does Ana live?"
    done = committed(
        http,
        user,
        [{"role": "user", "content": polluted}, {"role": "assistant", "content": "Braga."}],
        "clean",
    )
    assert done["replaced"] and [m["content"] for m in done["stored"]] == ["Where does Ana live?", "Braga."]
    contents = [
        m["content"]
        for m in http.get("/v1/messages", params={"user_id": user, "session_key": "clean"}).json()
    ]
    assert contents == ["Where does Ana live?", "Braga."]


def test_without_before_prompt_a_timestamp_cursor_finds_the_new_messages(
    http: httpx.Client, user: str
) -> None:
    first: list[dict[str, Any]] = [
        {"role": "user", "content": "I run every morning.", "timestamp": T0},
        {"role": "assistant", "content": "Great habit.", "timestamp": T0 + 2_000},
    ]
    assert committed(http, user, first, "ts")["method"] == "all"
    second = [
        *first,
        {"role": "user", "content": "Usually five kilometres.", "timestamp": "2026-03-01T10:00:05Z"},
    ]
    done = committed(http, user, second, "ts")
    assert done["method"] == "timestamp" and [m["content"] for m in done["stored"]] == [
        "Usually five kilometres."
    ]
    assert len(stored(http, user)) == 3


def test_host_ids_win_and_noise_is_dropped(http: httpx.Client, user: str) -> None:
    transcript: list[dict[str, Any]] = [
        {"role": "user", "content": "(session bootstrap)", "id": "h0"},
        {"role": "user", "content": [{"type": "text", "text": "I prefer tea over coffee."}], "id": "h1"},
        {"role": "assistant", "content": "Noted: tea.", "id": "h2"},
    ]
    done = committed(http, user, transcript, "ids")
    assert done["method"] == "id" and done["dropped"] == ["h0"]
    again = committed(http, user, transcript, "ids")
    assert again["stored"] == [] and again["duplicates"] == ["h1", "h2"]


def test_a_prompt_committed_before_the_answer_then_the_answer_alone(http: httpx.Client, user: str) -> None:
    """A host (the LLM proxy) that stores the prompt while the model answers, then the answer:
    ``stored_before`` says where the new messages start, each commit stores its own, once."""
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "I keep bees."},
        {"role": "assistant", "content": "Lovely."},
    ]
    committed(http, user, history, "early")
    recall = before(http, user, "How many hives do I have?", len(history), session="early")
    polluted = "\n\n".join(p for p in (recall["prepend_context"], "How many hives do I have?") if p)
    transcript = [*history, {"role": "user", "content": polluted}]

    def commit(messages: list[dict[str, Any]], stored_before: int) -> Any:
        body = {"messages": messages, "session_key": "early", "user_id": user, "stored_before": stored_before}
        r = http.post("/v1/turns/committed", json=body)
        assert r.status_code == 200, r.text
        return r.json()

    prompt = commit(transcript, len(history))
    assert prompt["method"] == "position" and prompt["replaced"]
    assert [m["content"] for m in prompt["stored"]] == ["How many hives do I have?"]  # the clean prompt
    answer = commit([*transcript, {"role": "assistant", "content": "Two."}], len(transcript))
    assert [m["content"] for m in answer["stored"]] == ["Two."] and not answer["replaced"]
    again = commit([*transcript, {"role": "assistant", "content": "Two."}], len(history))  # a retry
    assert again["stored"] == []
    assert stored(http, user) == ["I keep bees.", "Lovely.", "How many hives do I have?", "Two."]
    too_far = http.post(
        "/v1/turns/committed",
        json={"messages": history, "session_key": "early", "user_id": user, "stored_before": 9},
    )
    assert too_far.status_code == 422 and "stored_before" in too_far.text


def test_before_prompt_takes_a_room_for_the_memories_and_refuses_a_negative_one(
    http: httpx.Client, user: str
) -> None:
    facts = [
        {"role": "user", "content": f"My cousin {i} in Porto keeps {i + 2} cats and a parrot."}
        for i in range(30)
    ]
    committed(http, user, facts, session="facts")
    body = {"prompt": "Which cousin in Porto keeps cats?", "user_id": user, "memory_chars": 300}
    r = http.post("/v1/turns/before-prompt", json=body)
    assert r.status_code == 200, r.text
    assert 0 < len(r.json()["prepend_context"]) <= 300
    r = http.post("/v1/turns/before-prompt", json={**body, "memory_chars": -1})
    assert r.status_code in (400, 422) and "memory_chars" in r.text
