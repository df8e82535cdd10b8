"""How much the LLM proxy injects per turn, on one LoCoMo conversation replayed through it.

    python bench/proxy_injection.py --data path/to/locomo-dev.json [--sample conv-26] [--sessions 19]

The conversation's sessions are replayed in order as an agent would send them: speaker A is the
user, speaker B's turns are the scripted upstream's answers, each session one conversation
(the transcript resent whole every turn, OpenAI Chat Completions). Memory fills as it goes (the
offline engine, hashing embedder; the pipeline run to the end between two sessions, as the
background pipeline would have by the next conversation). Printed: the characters injected per
turn (``x-memstrata-injected``), system block and memories apart, median and p95, against the
budget (``proxy.memory_chars`` for the memories, recall's persona and navigation shares for the
system block), and how many distinct system blocks the upstream saw (each change costs the
provider's prompt cache once).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.live_server import LiveServer
from tests.support.llm_upstream import Reply, ScriptedUpstream

SYSTEM = "You are a friendly assistant chatting with {name}."
sessions_of: list[int] = []  # the session of each replayed request, in order


def groups(turns: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Consecutive turns of one speaker, joined: ``(speaker, text)``."""
    out: list[tuple[str, str]] = []
    for t in turns:
        if out and out[-1][0] == t["speaker"]:
            out[-1] = (t["speaker"], out[-1][1] + "\n" + t["text"])
        else:
            out.append((t["speaker"], t["text"]))
    return out


def p95(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def replay(
    server: LiveServer, up: ScriptedUpstream, sample: dict[str, Any], sessions: int
) -> list[tuple[int, int]]:
    conv = sample["conversation"]
    user = conv["speaker_a"]
    sizes: list[tuple[int, int]] = []
    sessions_of.clear()
    url = server.url + "/proxy/openai/v1/chat/completions"
    with httpx.Client(timeout=120) as client:
        for n in range(1, sessions + 1):
            turns = conv.get(f"session_{n}")
            if not turns:
                break
            messages: list[dict[str, str]] = [{"role": "system", "content": SYSTEM.format(name=user)}]
            said = groups(turns)
            for i, (speaker, text) in enumerate(said):
                if speaker != user:
                    if i == 0:
                        messages.append({"role": "assistant", "content": text})
                    continue
                answer = said[i + 1][1] if i + 1 < len(said) else "Talk soon!"
                up.enqueue(Reply(text=answer))
                messages.append({"role": "user", "content": text})
                body = {"model": "replay", "messages": messages}
                got = client.post(
                    url, json=body, headers={"x-memstrata-session": f"{sample['sample_id']}-s{n}"}
                )
                got.raise_for_status()
                note = dict(part.split("=", 1) for part in got.headers["x-memstrata-injected"].split("; "))
                sizes.append((int(note["system"]), int(note["memories"])))
                sessions_of.append(n)
                messages.append(
                    {"role": "assistant", "content": got.json()["choices"][0]["message"]["content"]}
                )
            # Between two conversations the background pipeline would have caught up: let it, so
            # the persona and scenes exist as they would (not timed).
            client.post(server.url + "/v1/pipeline/run-all", json={}, timeout=600).raise_for_status()
    return sizes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, type=Path, help="the LoCoMo JSON file")
    ap.add_argument("--sample", default="conv-26")
    ap.add_argument("--sessions", type=int, default=100)
    a = ap.parse_args()
    sample = next(s for s in json.loads(a.data.read_text()) if s["sample_id"] == a.sample)
    with (
        tempfile.TemporaryDirectory() as tmp,
        ScriptedUpstream() as up,
        LiveServer(
            Path(tmp) / "data", proxy={"openai_url": up.openai_url, "anthropic_url": up.url}
        ) as server,
    ):
        sizes = replay(server, up, sample, a.sessions)
        s, r = server.settings.proxy, server.settings.recall
        prefix = SYSTEM.format(name=sample["conversation"]["speaker_a"])
        blocks = [str(rec.json["messages"][0]["content"]).removeprefix(prefix) for rec in up.requests]
    systems = set(blocks)
    within = sum(
        1
        for i in range(1, len(blocks))
        if sessions_of[i] == sessions_of[i - 1] and blocks[i] != blocks[i - 1]
    )
    system, memories = [x for x, _ in sizes], [y for _, y in sizes]
    total = [x + y for x, y in sizes]
    print(f"{a.sample}: {len(sizes)} turns replayed through the proxy")
    for name, values in (("system block", system), ("memories", memories), ("total", total)):
        print(
            f"  {name:12}: median {statistics.median(values):.0f} chars, p95 {p95(values)}, max {max(values)}"
        )
    print(
        f"  budget: memories <= {s.memory_chars} chars (proxy.memory_chars); system block <= persona "
        f"{r.persona_chars} + navigation {r.navigation_chars} chars plus tags"
    )
    print(f"  turns with memories: {sum(1 for m in memories if m)} of {len(memories)}")
    print(
        f"  distinct system blocks the upstream saw: {len(systems)} (each change re-primes the prompt cache)"
    )
    print(f"  system block changes between two turns of one session: {within}")
    print(f"  total p95 {p95(total)} chars ~ {p95(total) / 4:.0f} tokens at 4 characters a token")


if __name__ == "__main__":
    main()
