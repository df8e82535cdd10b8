"""Claude Code (``claude -p``) through memstrata's proxy, against the scripted upstream: the
answer arrives unchanged, each run is its own session, what session 1 told reaches session 2's
model call, L0 holds the user's words once without Claude Code's ``<system-reminder>`` blocks, a
tool turn's output is not stored as the user's words, and the compaction summary request
(auxiliary) is neither injected into nor stored."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_agents.conftest import (
    ANSWER,
    FACT,
    Cli,
    Model,
    claude,
    injected,
    interactive,
    model_calls,
    recallable,
    settled,
)
from tests.support.live_server import LiveServer
from tests.support.llm_upstream import ScriptedUpstream

MESSAGES = "/v1/messages"


def _claude(tmp_path: Path, gateway: LiveServer, *argv: str) -> Cli:
    return claude(tmp_path, gateway.url + "/proxy/anthropic", headers="x-memstrata-user-id: ana", argv=argv)


def _sessions(up: ScriptedUpstream) -> list[str]:
    return [r.headers["x-claude-code-session-id"] for r in model_calls(up, MESSAGES)]


def test_two_runs_remember_across_sessions_with_l0_clean_and_once(
    tmp_path: Path, gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    cli = _claude(tmp_path, gateway)
    (cli.work / "CLAUDE.md").write_text("Answer briefly. This project is a bee diary.\n")
    first = cli.run(FACT)
    assert first.stdout.strip() == ANSWER  # the answer arrives unchanged
    sent = json.dumps(model_calls(upstream, MESSAGES)[0].json["messages"][0])
    assert "<system-reminder>" in sent  # what Claude Code puts in the user turn went upstream
    recallable(gateway, "Where are my beehives?")
    upstream.script = Model(answers={"Where are my beehives": "On your roof in Porto."})
    second = cli.run("Where are my beehives?")
    assert second.stdout.strip() == "On your roof in Porto."
    calls = model_calls(upstream, MESSAGES)
    assert len(calls) == 2  # no other model call in -p mode
    assert len(set(_sessions(upstream))) == 2  # each run its own session...
    recalled = json.dumps(calls[1].json["messages"])
    assert injected(calls[1]) and "Porto" in json.dumps(calls[1].json)  # ...and session 1 reached 2
    assert not injected(calls[0])
    # The request went upstream as Claude Code wrote it, but for the memories: its reminder
    # blocks are all there.
    assert recalled.count("<system-reminder>") == sent.count("<system-reminder>")
    rows = settled(gateway, 4)
    assert [(m["role"], m["content"]) for m in rows] == [
        ("user", FACT),
        ("assistant", ANSWER),
        ("user", "Where are my beehives?"),
        ("assistant", "On your roof in Porto."),
    ]
    assert len({m["session_key"] for m in rows}) == 2


def test_a_tool_turn_runs_and_its_output_is_not_stored_as_the_users_words(
    tmp_path: Path, gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    command = json.dumps({"command": "echo hive-count-$((1+2))", "description": "Count the hives"})
    seen: list[str] = []

    def after(output: str) -> str:
        seen.append(output)
        return "The counter has run."

    upstream.script = Model(tools={"run the hive counter": ("Bash", command)}, after_tool=after)
    cli = _claude(tmp_path, gateway, "--allowedTools", "Bash")
    assert cli.run("Please run the hive counter.").stdout.strip() == "The counter has run."
    assert seen and "hive-count-3" in seen[0]  # Claude Code ran the command it was asked to
    calls = model_calls(upstream, MESSAGES)
    assert len(calls) == 2
    # The tool call and its result reached the upstream untouched.
    loop = calls[1].json["messages"]
    assert any(b.get("type") == "tool_use" and b["input"] == json.loads(command) for b in loop[-2]["content"])
    rows = settled(gateway, 2)
    assert [(m["role"], m["content"]) for m in rows] == [
        ("user", "Please run the hive counter."),
        ("assistant", "The counter has run."),
    ]
    assert "<relevant-memories>" not in json.dumps(loop[-1])  # a tool result is not a new prompt


def test_the_compaction_request_is_neither_injected_nor_stored(
    tmp_path: Path, gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    summary = "<analysis>Bees.</analysis>\n<summary>The user keeps three beehives in Porto.</summary>"
    upstream.script = Model(
        answers={"create a detailed summary": summary, "How many beehives": "Three, on your roof."}
    )
    cli = _claude(tmp_path, gateway)
    cli.run(FACT)
    recallable(gateway, "How many beehives do I keep?")
    cli.run("/compact", "--continue")
    cli.run("How many beehives do I keep?", "--continue")
    calls = model_calls(upstream, MESSAGES)
    compaction = [c for c in calls if "create a detailed summary" in json.dumps(c.json["messages"][-1])]
    assert compaction, [json.dumps(c.json["messages"][-1])[-300:] for c in calls]
    for call in compaction:
        assert not injected(call)
    assert len(set(_sessions(upstream))) == 1  # --continue resumes the run's session
    assert injected(calls[-1])  # the prompt after the compaction is a turn again
    rows = settled(gateway, 4)
    assert [(m["role"], m["content"]) for m in rows] == [
        ("user", FACT),
        ("assistant", ANSWER),
        ("user", "How many beehives do I keep?"),
        ("assistant", "Three, on your roof."),
    ]
    stats = gateway.app.state.proxy.stats
    assert stats.auxiliary >= len(compaction)


def test_interactive_claude_codes_title_request_is_neither_injected_nor_stored(
    tmp_path: Path, gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    """Started in a terminal, Claude Code also asks the model for the session's title."""
    cli = _claude(tmp_path, gateway)
    cli.run(FACT)  # an earlier session: something to recall
    recallable(gateway, "Where are my beehives?")
    upstream.script = Model(answers={"Where are my beehives": "On your roof in Porto."})
    answered = lambda: len(model_calls(upstream, MESSAGES)) >= 3  # noqa: E731
    screen = interactive(cli, "Where are my beehives?", answered, shows="On your roof in Porto.", ready="❯")
    assert "On your roof in Porto." in screen  # the answer reached the person unchanged
    calls = model_calls(upstream, MESSAGES)[1:]
    titles = [c for c in calls if "naming a coding session" in json.dumps(c.json["system"])]
    assert len(titles) == 1, [json.dumps(c.json["system"])[:300] for c in calls]
    assert not injected(titles[0])
    turn = next(c for c in calls if c not in titles)
    assert injected(turn) and "Porto" in json.dumps(turn.json)
    rows = settled(gateway, 4)
    assert [(m["role"], m["content"]) for m in rows][2:] == [  # the title's request is not stored
        ("user", "Where are my beehives?"),
        ("assistant", "On your roof in Porto."),
    ]
