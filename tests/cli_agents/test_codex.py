"""The Codex CLI (``codex exec``, Responses API streaming) through memstrata's proxy, against the
scripted upstream: the answer arrives unchanged, each run is its own session (Codex's
``session-id`` header), what session 1 told reaches session 2's model call, L0 holds the user's
words once without Codex's AGENTS.md and ``<environment_context>`` preambles, a shell tool turn's
output is not stored as the user's words, and a request Codex marks as other than a turn
(``x-codex-turn-metadata``'s ``request_kind``) is neither injected into nor stored."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.cli_agents.conftest import (
    ANSWER,
    FACT,
    Cli,
    Model,
    codex,
    injected,
    interactive,
    model_calls,
    recallable,
    settled,
)
from tests.support.live_server import LiveServer
from tests.support.llm_upstream import ScriptedUpstream

RESPONSES = "/v1/responses"


def _codex(tmp_path: Path, gateway: LiveServer) -> Cli:
    return codex(tmp_path, gateway.url + "/proxy/openai/v1", headers={"x-memstrata-user-id": "ana"})


def _answer(stdout: str) -> str:
    return stdout.strip().splitlines()[-1]


def test_two_runs_remember_across_sessions_with_l0_clean_and_once(
    tmp_path: Path, gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    cli = _codex(tmp_path, gateway)
    (cli.work / "AGENTS.md").write_text("Answer briefly. This project is a bee diary.\n")
    assert _answer(cli.run(FACT).stdout) == ANSWER  # the answer arrives unchanged
    first = json.dumps(model_calls(upstream, RESPONSES)[0].json["input"])
    assert "<environment_context>" in first and "AGENTS.md instructions" in first
    recallable(gateway, "Where are my beehives?")
    upstream.script = Model(answers={"Where are my beehives": "On your roof in Porto."})
    assert _answer(cli.run("Where are my beehives?").stdout) == "On your roof in Porto."
    calls = model_calls(upstream, RESPONSES)
    assert len(calls) == 2
    assert len({c.headers["session-id"] for c in calls}) == 2  # each run its own session...
    assert injected(calls[1]) and "Porto" in json.dumps(calls[1].json)  # ...and session 1 reached 2
    assert not injected(calls[0])
    rows = settled(gateway, 4)
    assert [(m["role"], m["content"]) for m in rows] == [
        ("user", FACT),
        ("assistant", ANSWER),
        ("user", "Where are my beehives?"),
        ("assistant", "On your roof in Porto."),
    ]
    assert len({m["session_key"] for m in rows}) == 2


def test_a_shell_tool_turn_runs_and_its_output_is_not_stored_as_the_users_words(
    tmp_path: Path, gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    seen: list[str] = []

    def after(output: str) -> str:
        seen.append(output)
        return "The counter has run."

    call = json.dumps({"cmd": "echo hive-count-$((1+2))"})
    upstream.script = Model(tools={"run the hive counter": ("exec_command", call)}, after_tool=after)
    cli = _codex(tmp_path, gateway)
    assert _answer(cli.run("Please run the hive counter.").stdout) == "The counter has run."
    assert seen and "hive-count-3" in seen[0]  # Codex ran the command it was asked to
    calls = model_calls(upstream, RESPONSES)
    assert len(calls) == 2
    loop = calls[1].json["input"]
    assert loop[-2]["type"] == "function_call" and json.loads(loop[-2]["arguments"]) == json.loads(call)
    assert loop[-1]["type"] == "function_call_output"  # the tool turn reached the upstream untouched
    rows = settled(gateway, 2)
    assert [(m["role"], m["content"]) for m in rows] == [
        ("user", "Please run the hive counter."),
        ("assistant", "The counter has run."),
    ]


def test_a_request_codex_marks_as_not_a_turn_is_neither_injected_nor_stored(
    tmp_path: Path, gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    """Codex's auxiliary requests (compaction and the like) say so in ``x-codex-turn-metadata``;
    ``codex exec`` sends none on its own, so the first run's request is replayed with the kind
    changed, as Codex would send it."""
    cli = _codex(tmp_path, gateway)
    cli.run(FACT)
    recallable(gateway, "Where are my beehives?")
    rows = settled(gateway, 2)
    turn = model_calls(upstream, RESPONSES)[0]
    metadata = json.loads(turn.headers["x-codex-turn-metadata"])
    assert metadata["request_kind"] == "turn"
    headers = {k: v for k, v in turn.headers.items() if k not in ("host", "content-length")}
    # As Codex sent them (memstrata's own headers are not forwarded: the tenant goes back in),
    # in a session of its own.
    headers.update({"x-memstrata-user-id": "ana", "session-id": "a-later-run"})
    body = turn.json
    body["input"][-1]["content"][0]["text"] = "Where are my beehives?"
    for kind, expected in (("compact", False), ("turn", True)):
        headers["x-codex-turn-metadata"] = json.dumps({**metadata, "request_kind": kind})
        sent = httpx.post(gateway.url + "/proxy/openai/v1/responses", json=body, headers=headers, timeout=60)
        assert sent.status_code == 200, sent.text
        assert injected(upstream.requests[-1]) is expected
    assert len(settled(gateway, len(rows) + 2)) == len(rows) + 2  # only the "turn" one was stored


def test_the_codex_tuis_title_request_is_neither_injected_nor_stored(
    tmp_path: Path, gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    """Started in a terminal, Codex names the session by a request of its own: a thread of
    its own (``thread_source`` "thread_title"), its prompt quoting the user's."""
    cli = _codex(tmp_path, gateway)
    cli.run(FACT)  # an earlier session: something to recall
    recallable(gateway, "Tell me where my beehives are")
    upstream.script = Model(answers={"where my beehives are": "On your roof in Porto."})
    cli.argv = ["--dangerously-bypass-approvals-and-sandbox"]  # the TUI, not exec
    answered = lambda: len(model_calls(upstream, RESPONSES)) >= 3  # noqa: E731
    # No "?": typed into the TUI, it opens the shortcuts.
    screen = interactive(
        cli, "Tell me where my beehives are", answered, shows="On your roof in Porto.", ready="›"
    )
    assert "On your roof in Porto." in screen
    calls = model_calls(upstream, RESPONSES)[1:]
    titles = [c for c in calls if "task title" in json.dumps(c.json["input"])]
    assert len(titles) == 1, [json.dumps(c.json["input"][-1])[-300:] for c in calls]
    assert json.loads(titles[0].headers["x-codex-turn-metadata"])["thread_source"] == "thread_title"
    assert not injected(titles[0])
    turn = next(c for c in calls if c not in titles)
    assert injected(turn) and "Porto" in json.dumps(turn.json)
    rows = settled(gateway, 4)
    assert [(m["role"], m["content"]) for m in rows][2:] == [  # the title's request is not stored
        ("user", "Tell me where my beehives are"),
        ("assistant", "On your roof in Porto."),
    ]
