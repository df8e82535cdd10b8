"""The host turn lifecycle, pure: noise, what is new in a transcript, ids, the polluted prompt."""

from __future__ import annotations

import pytest

from memstrata.errors import ConfigError, InputError
from memstrata.layers.host_turns import (
    PromptMark,
    PromptMarks,
    TurnMessage,
    as_turn_message,
    clean_prompt,
    compile_patterns,
    is_host_event,
    plan_commit,
    strip_noise,
    text_of,
)

INJECTED = "<relevant-memories>\n- [persona|-] Ann likes tea\n</relevant-memories>\n\n"


def u(text: str, **kw: object) -> TurnMessage:
    return TurnMessage("user", text, **kw)  # type: ignore[arg-type]


def a(text: str, **kw: object) -> TurnMessage:
    return TurnMessage("assistant", text, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("[Tue 2026-03-03 10:00 UTC] I moved to Lisbon", "I moved to Lisbon"),
        ("[2026-03-24 03:48 GMT+8] hello there", "hello there"),
        ("look [media attached: photo.jpg (image/jpeg)]\nat this", "look at this"),
        ("[[reply_to_current]] Sure, noted.", "Sure, noted."),
        ("System: [2026-03-03 10:00] Exec completed (code 0)\nDone with it", "Done with it"),
        ("<current_task_context>task 7</current_task_context>What next?", "What next?"),
        ("[image] is kept, and so is [code]", "[image] is kept, and so is [code]"),
    ],
)
def test_host_noise_is_cut_and_nothing_else(raw: str, clean: str) -> None:
    assert strip_noise(raw) == clean


def test_configured_patterns_are_cut_and_a_bad_one_is_a_config_error() -> None:
    extra = compile_patterns([r"^\(sent from my phone\)$"])
    assert strip_noise("Call me later\n(sent from my phone)", extra) == "Call me later"
    with pytest.raises(ConfigError, match="noise_patterns"):
        compile_patterns(["(unclosed"])


def test_host_events_are_recognised() -> None:
    assert is_host_event("(session bootstrap)")
    assert is_host_event("A new session was started via /new")
    assert is_host_event("Pre-compaction memory flush. Store durable memories now.")
    assert not is_host_event("I started a new session of yoga")


def test_the_clean_prompt_drops_injected_blocks_and_stamps() -> None:
    assert clean_prompt(f"{INJECTED}[Tue 2026-03-03 10:00 UTC] What tea do I like?") == "What tea do I like?"


def test_content_parts_and_iso_timestamps_are_read() -> None:
    parts = [
        {"type": "text", "text": "hi"},
        {"type": "image_url", "image_url": {}},
        {"type": "text", "text": "you"},
    ]
    assert text_of(parts, "x") == "hi\n[image]\nyou"  # an image is said, as L0 says base64 images
    assert text_of(["plain", "strings"], "x") == "plain\nstrings"
    with pytest.raises(InputError, match=r"x\[0\]\.text"):
        text_of([{"type": "text", "text": 42}], "x")  # was dropped: 200 with nothing stored
    with pytest.raises(InputError, match="no text or image"):
        text_of([{"type": "tool_use", "id": "t1"}], "x")
    m = as_turn_message({"role": "user", "content": parts, "timestamp": "2026-03-01T10:00:00Z"}, 0)
    assert m.timestamp == 1772359200000
    with pytest.raises(InputError, match=r"messages\[2\]\.content"):
        as_turn_message({"role": "user", "content": 5}, 2)


def test_with_ids_everything_goes_to_the_store_which_skips_known_ids() -> None:
    plan = plan_commit([u("hi", id="1"), a("hello", id="2")], session_key="s", mark=None, last_timestamp=9)
    assert plan.method == "id"
    assert [m.id for m in plan.messages] == ["1", "2"]


def test_position_slicing_keeps_what_came_after_before_prompt() -> None:
    transcript = [u("first question"), a("first answer"), u(INJECTED + "second question"), a("second answer")]
    mark = PromptMark("second question", 2, 0)
    plan = plan_commit(transcript, session_key="s", mark=mark, last_timestamp=None)
    assert plan.method == "position"
    assert [m.content for m in plan.messages] == ["second question", "second answer"]
    assert plan.replaced and plan.skipped == 2


def test_the_polluted_prompt_is_replaced_even_when_sanitizing_would_miss_the_injection() -> None:
    polluted = "Context you may use: Ann likes tea.\n\nWhat do I drink?"
    mark = PromptMark("What do I drink?", 0, 0)
    plan = plan_commit([u(polluted), a("Tea.")], session_key="s", mark=mark, last_timestamp=None)
    assert [m.content for m in plan.messages] == ["What do I drink?", "Tea."]


def test_timestamp_cursor_when_there_is_no_mark() -> None:
    transcript = [u("old", timestamp=100), a("old reply", timestamp=200), u("new", timestamp=300)]
    plan = plan_commit(transcript, session_key="s", mark=None, last_timestamp=200)
    assert plan.method == "timestamp"
    assert [m.content for m in plan.messages] == ["old reply", "new"]  # at-or-after: ids dedup it


def test_stable_ids_make_a_resent_transcript_idempotent() -> None:
    transcript = [u("hello"), a("hi, how can I help?"), u("tell me a joke")]
    first = plan_commit(transcript, session_key="s", mark=None, last_timestamp=None)
    again = plan_commit(transcript, session_key="s", mark=None, last_timestamp=None)
    other = plan_commit(transcript, session_key="other", mark=None, last_timestamp=None)
    assert first.method == "all"
    assert [m.id for m in first.messages] == [m.id for m in again.messages]
    assert not {m.id for m in first.messages} & {m.id for m in other.messages}


def test_the_replaced_prompt_keeps_its_id_when_resent_without_the_mark() -> None:
    transcript = [u(INJECTED + "What tea do I like?"), a("Green tea.")]
    marked = plan_commit(
        transcript, session_key="s", mark=PromptMark("What tea do I like?", 0, 0), last_timestamp=None
    )
    unmarked = plan_commit(transcript, session_key="s", mark=None, last_timestamp=None)
    assert [m.id for m in marked.messages] == [m.id for m in unmarked.messages]


def test_noise_tool_and_system_messages_are_not_stored() -> None:
    transcript = [
        TurnMessage("system", "You are helpful"),
        u("(session bootstrap)"),
        u("/reset"),
        TurnMessage("tool", "{}"),
        u("I like hiking"),
    ]
    plan = plan_commit(transcript, session_key="s", mark=None, last_timestamp=None)
    assert [m.content for m in plan.messages] == ["I like hiking"]
    assert len(plan.dropped) == 2


def test_marks_are_used_once_bounded_and_expire() -> None:
    marks = PromptMarks(capacity=2, ttl_ms=1000)
    for key in ("a", "b", "c"):
        marks.put(key, PromptMark(key, None, at=0))
    assert marks.pop("a", now=10) is None  # evicted: the oldest
    assert marks.pop("b", now=2000) is None  # expired
    mark = marks.pop("c", now=10)
    assert mark is not None and mark.clean_text == "c"
    assert marks.pop("c", now=10) is None
