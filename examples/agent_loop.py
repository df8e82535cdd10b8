"""An agent loop with long-term memory: before each model call the host asks memstrata for
context (``before_prompt``), after it hands over the transcript (``turn_committed``).

    python examples/agent_loop.py --base-url http://localhost:11434/v1 --model llama3.1 \
        --memory ~/.memstrata --user maya

Any OpenAI-compatible endpoint works (OpenAI, Ollama, vLLM, LM Studio, ...); ``--memory`` is a
data directory, or the URL of a ``memstrata serve``. Type a message per line; an empty line ends.

The loop does what agent hosts do: it pastes recall's ``prepend_context`` into the user's message
and sends the whole transcript at the end of every turn. memstrata stores each message once, and
the user's message as they typed it, not with the pasted context.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from collections.abc import Iterable
from typing import Any

from openai import OpenAI

from memstrata import BlockingMemoryApi, Memory

SYSTEM = "You are a helpful assistant with a long-term memory of this user."


def turn(
    mem: BlockingMemoryApi,
    llm: OpenAI,
    model: str,
    transcript: list[dict[str, Any]],
    text: str,
    *,
    session: str,
    user: str,
) -> str:
    """One turn: recall, call the model, commit the transcript. Returns the reply."""
    # This loop gives the model no memory tools: recall leaves their guide out of the context.
    context = mem.before_prompt(
        text, session_key=session, transcript_length=len(transcript), user_id=user, tools=False
    )
    prompt = f"{context.prepend_context}\n\n{text}" if context.prepend_context else text
    transcript.append({"role": "user", "content": prompt})
    answer = llm.chat.completions.create(
        model=model,
        messages=[{"role": "system", "content": f"{SYSTEM}\n\n{context.system_context}"}, *transcript],  # type: ignore[list-item]
    )
    reply = answer.choices[0].message.content or ""
    transcript.append({"role": "assistant", "content": reply})
    mem.turn_committed(transcript, session_key=session, user_id=user)
    return reply


def chat(
    mem: BlockingMemoryApi, llm: OpenAI, model: str, lines: Iterable[str], *, session: str, user: str
) -> list[str]:
    """Run a conversation, one user message per line (until an empty one); returns the replies."""
    transcript: list[dict[str, Any]] = []
    replies = []
    for line in lines:
        if not line.strip():
            break
        replies.append(turn(mem, llm, model, transcript, line.strip(), session=session, user=user))
        print(f"assistant: {replies[-1]}", flush=True)
    return replies


def main(argv: list[str] | None = None, lines: Iterable[str] | None = None) -> list[str]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base-url", required=True, help="The OpenAI-compatible endpoint, e.g. .../v1")
    p.add_argument("--model", required=True)
    p.add_argument("--api-key", default="not-needed", help="The endpoint's key (local servers need none).")
    p.add_argument(
        "--memory",
        default=None,
        help="A data directory, or a memstrata server URL (default: a temporary directory, removed "
        "at the end: the real ~/.memstrata is used only when named).",
    )
    p.add_argument("--user", default="default")
    p.add_argument("--session", default="agent-loop")
    a = p.parse_args(argv)
    llm = OpenAI(base_url=a.base_url, api_key=a.api_key)
    with contextlib.ExitStack() as stack:
        where = a.memory or stack.enter_context(tempfile.TemporaryDirectory(prefix="agent-loop-"))
        with Memory.open(where) as mem:  # a data directory here, or a server's HTTP client
            return chat(
                mem, llm, a.model, lines if lines is not None else sys.stdin, session=a.session, user=a.user
            )


if __name__ == "__main__":
    main()
