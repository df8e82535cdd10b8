"""The host turn lifecycle: what an agent host sends around each model call, made into clean L0.

A host calls ``before_prompt`` with the user's prompt (and, when it knows it, how many messages
its transcript held before that prompt), then ``turn_committed`` after the reply with its
transcript: often the whole of it, every turn, with recall's context pasted into the user's
message and its own markers sprinkled in. This module decides, purely, what is new in such a
transcript and what it should look like stored:

1. **What is new**: by message id when every message has one (the store skips ids it holds);
   else by position, against the transcript length remembered at ``before_prompt``; else by a
   timestamp cursor (messages at or after the session's last stored one); else all of it.
2. **Stable ids**: a message without an id gets one made of the session, its position in the
   transcript and its cleaned text, so the same transcript committed again (a retry, a host that
   resends everything) stores nothing twice.
3. **The polluted prompt**: the turn's user message (the first user message at or after the
   remembered position, else the last user message) is replaced by the clean prompt remembered at
   ``before_prompt``: the host stored it with recall's context pasted in.
4. **Harness text**: what a coding agent puts into the user's turn (Claude Code's
   ``<system-reminder>`` blocks, Codex's ``<environment_context>`` and AGENTS.md preamble, ...:
   ``HARNESS_RULES``) is cut.
5. **Host noise**: line-leading time stamps (``[Tue 2026-03-03 10:00 UTC]``), ``[media attached]``
   placeholders, reply directives (``[[reply_to_current]]``), host metadata blocks and ``System:``
   exec lines are cut, with any configured patterns; messages that are host events (session
   bootstrap, pre-compaction flush) or that L0 would drop anyway are dropped. L0's own sanitizing
   (injected memory blocks, images, code) runs on top.

Only ``user`` and ``assistant`` messages are stored; others (system, tool) still count as
positions in the transcript.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from memstrata.errors import ConfigError, InputError
from memstrata.layers.l0.sanitize import sanitize, strip_memory_blocks
from memstrata.layers.l0.times import epoch_ms
from memstrata.lru import Lru
from memstrata.models import Message, NewMessage, Role

Method = Literal["id", "position", "timestamp", "all"]
_CHAT_ROLES = frozenset({"user", "assistant"})

_STAMP = re.compile(
    r"^[ \t]*\[(?:[A-Z][a-z]{2},? )?\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}(?::\d{2})?"
    r"(?:\s*(?:[A-Z]{2,5})?(?:[+-]\d{1,2}(?::?\d{2})?)?)?\][ \t]*",
    re.MULTILINE,
)
_NOISE = (
    re.compile(r"\[media attached(?::[^\]\n]*)?\][ \t]*\n?", re.IGNORECASE),
    re.compile(r"\[\[reply_to[^\]\n]*\]\][ \t]*"),
    re.compile(
        r"<(current_task_context|history_task_context|relevant-scenes)\b[^>]*>.*?</\1\s*>",
        re.IGNORECASE | re.DOTALL,
    ),
    re.compile(
        r"(?:Conversation info|Sender|Thread starter|Replied message|Forwarded message context|"
        r"Chat history since last reply)\s*\(untrusted[^)\n]*\):\s*```json\s*.*?```",
        re.DOTALL,
    ),
    re.compile(r"^System:\s*\[[^\n]*$", re.MULTILINE),
    re.compile(r"To send an image back,.*?Keep caption in the text body\.\s*", re.DOTALL),
)
_HOST_EVENTS = re.compile(
    r"^(?:\(session bootstrap\)$|A new session was started via|✅\s*New session started|"
    r"Pre-compaction memory flush)"
)
_BLANK_RUN = re.compile(r"\n(?:[ \t]*\n){2,}")


@dataclass(frozen=True, slots=True)
class HarnessRule:
    """Text a coding-agent harness puts into the user's turn that the user did not write."""

    harness: str
    what: str
    pattern: re.Pattern[str]


def _blocks(*tags: str) -> re.Pattern[str]:
    # Each tag spelled out in its closer (no back-reference), so the rules can be joined into
    # one pattern (``_HARNESS``).
    return re.compile(
        "|".join(rf"<{re.escape(t)}\b[^>]*>.*?</{re.escape(t)}\s*>[ \t]*\n?" for t in tags), re.DOTALL
    )


# What each harness puts into a user turn (seen on the wire from Claude Code 2.1.332 and Codex
# 0.171.0, tests/cli_agents), removed from what is stored and recalled for, never from what goes
# upstream. docs/proxy.md lists them.
HARNESS_RULES = (
    HarnessRule(
        "Claude Code",
        "<system-reminder> blocks: CLAUDE.md contents, commit attribution, dates, agent and skill lists, context notices",
        _blocks("system-reminder"),
    ),
    HarnessRule(
        "Claude Code",
        "slash-command and !-shell records, hook output, task notifications",
        _blocks(
            "local-command-caveat",
            "command-name",
            "command-message",
            "command-args",
            "local-command-stdout",
            "local-command-stderr",
            "bash-input",
            "bash-stdout",
            "bash-stderr",
            "user-prompt-submit-hook",
            "task-notification",
        ),
    ),
    HarnessRule(
        "Claude Code",
        "the compaction preface (the model's summary of the earlier conversation)",
        re.compile(
            r"This session is being continued from a previous conversation that ran out of context\."
            r"(?:.*?(?:Pick up the last task as if the break never happened\.|"
            r"If you need details from the earlier conversation, ask the user\.))?",
            re.DOTALL,
        ),
    ),
    HarnessRule(
        "Claude Code", "interruption notes", re.compile(r"\[Request interrupted by user(?: for tool use)?\]")
    ),
    HarnessRule(
        "Codex",
        "the AGENTS.md preamble",
        re.compile(r"# AGENTS\.md instructions for [^\n]*\n+<INSTRUCTIONS>.*?</INSTRUCTIONS>", re.DOTALL),
    ),
    HarnessRule(
        "Codex",
        "<environment_context> and the other context blocks",
        _blocks(
            "environment_context",
            "user_instructions",
            "user_shell_command",
            "turn_aborted",
            "subagent_notification",
            "startup_context",
            "codex_internal_context",
            "agent_message_board_notification",
        ),
    ),
)


# All the rules as one pattern: one scan of a message rather than one per rule (every request
# of an agent's conversation resends every earlier user message).
_HARNESS = re.compile("|".join(f"(?:{r.pattern.pattern})" for r in HARNESS_RULES), re.DOTALL)


_CACHED_CHARS = 8192  # texts up to this long are remembered: at most 1,024 of them, ~16 MB


def strip_harness(text: str) -> str:
    """``text`` without what a coding-agent harness put into it (``HARNESS_RULES``). An agent
    resends every earlier user message with each request: a short text seen lately is not
    scanned again."""
    if "<" not in text and "[" not in text and "This session" not in text and "# AGENTS" not in text:
        return text  # the common case: a plain prompt, nothing to scan
    return _stripped(text) if len(text) <= _CACHED_CHARS else _HARNESS.sub("", text)


@functools.lru_cache(maxsize=1024)
def _stripped(text: str) -> str:
    return _HARNESS.sub("", text)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a valid pair is one character in a str


@dataclass(frozen=True, slots=True)
class TurnMessage:
    """One message of a host transcript. ``timestamp`` is epoch ms when the host gave one."""

    role: str
    content: str
    id: str | None = None
    name: str | None = None
    timestamp: int | None = None


@dataclass(frozen=True, slots=True)
class PromptMark:
    """What ``before_prompt`` remembers for a session until its ``turn_committed``."""

    clean_text: str
    count: int | None  # transcript length before the prompt, when the host said
    at: int  # ms


@dataclass(frozen=True, slots=True)
class CommitPlan:
    """What ``turn_committed`` hands to capture: new messages with ids, and how they were found."""

    messages: tuple[NewMessage, ...]
    method: Method
    skipped: int  # chat messages of the transcript judged already stored (before id dedup)
    replaced: bool  # the turn's user message was replaced by the clean prompt
    dropped: tuple[str, ...]  # ids of host noise and messages L0 drops


@dataclass(frozen=True, slots=True)
class TurnResult:
    """What ``turn_committed`` did: stored messages (with seq), ids already stored, ids dropped as
    noise, how the new messages were found, and whether the polluted prompt was replaced."""

    stored: tuple[Message, ...]
    duplicates: tuple[str, ...]
    dropped: tuple[str, ...]
    method: Method
    replaced: bool
    degradations: tuple[str, ...] = ()


# --- text -----------------------------------------------------------------------------------------


def compile_patterns(patterns: Sequence[str]) -> tuple[re.Pattern[str], ...]:
    """The configured noise patterns, compiled (multiline). A bad one is a ``ConfigError``."""
    try:
        return tuple(re.compile(p, re.MULTILINE) for p in patterns)
    except re.error as exc:
        raise ConfigError(f"turns.noise_patterns: not a regular expression: {exc}") from exc


def strip_noise(text: str, extra: Sequence[re.Pattern[str]] = ()) -> str:
    """``text`` without harness text and host noise (the module's rules 4 and 5) and matches of ``extra``, trimmed; a
    lone surrogate (JSON allows ``"\\ud800"``, UTF-8 cannot hold it) becomes U+FFFD, so the
    message is stored with the character replaced rather than failing to store at all."""
    text = strip_harness(_LONE_SURROGATE.sub("\ufffd", text).replace("\r\n", "\n"))
    for pattern in (*_NOISE, *extra):
        text = pattern.sub("", text)
    text = _STAMP.sub("", text)
    return _BLANK_RUN.sub("\n\n", text).strip()


def is_host_event(text: str) -> bool:
    """Whether a message is the host talking to itself (session bootstrap, compaction flush)."""
    return _HOST_EVENTS.match(text.strip()) is not None


def clean_prompt(text: str, extra: Sequence[re.Pattern[str]] = ()) -> str:
    """The user's prompt as they wrote it: without injected memory blocks and host noise."""
    return strip_noise(strip_memory_blocks(text), extra)


_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
_IMAGE_PARTS = frozenset({"image_url", "image", "input_image"})


def text_of(content: object, item: str) -> str:
    """A message's text: a string, or an OpenAI-style list of content parts, joined by lines:
    text parts (``{"type": "text", "text": ...}``, or plain strings) as they are, image parts as
    ``[image]``; other parts (tool calls, say) carry no text. A part whose text is not a string,
    or a list with no text and no image at all, is refused: it would store nothing."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise InputError("content must be a string or a list of content parts", item=item)
    texts: list[str] = []
    for j, part in enumerate(content):
        where = f"{item}[{j}]"
        if isinstance(part, str):
            texts.append(part)
        elif not isinstance(part, Mapping):
            raise InputError("a content part must be a string or an object", item=where)
        elif part.get("type") in _TEXT_PARTS:
            if not isinstance(part.get("text"), str):
                raise InputError("a text part's text must be a string", item=f"{where}.text")
            texts.append(part["text"])
        elif part.get("type") in _IMAGE_PARTS:
            texts.append("[image]")
    if content and not texts:
        raise InputError("no text or image part in this content", item=item)
    return "\n".join(texts)


def as_turn_message(m: TurnMessage | Mapping[str, object], i: int) -> TurnMessage:
    """A transcript item as a ``TurnMessage``; timestamps may be epoch ms/s or ISO 8601."""
    if isinstance(m, TurnMessage):
        return m
    item = f"messages[{i}]"
    if not isinstance(m, Mapping):
        raise InputError("a message must be a mapping", item=item)
    role, mid, name = m.get("role"), m.get("id"), m.get("name")
    if not isinstance(role, str):
        raise InputError("role must be a string", item=f"{item}.role")
    for key, value in (("id", mid), ("name", name)):
        if value is not None and not isinstance(value, str):
            raise InputError(f"{key} must be a string", item=f"{item}.{key}")
    return TurnMessage(
        role=role,
        content=text_of(m.get("content", ""), f"{item}.content"),
        id=str(mid) if mid else None,
        name=str(name) if name else None,
        timestamp=epoch_ms(m.get("timestamp"), f"{item}.timestamp"),
    )


def stable_id(session_key: str, index: int, role: Role, text: str, timestamp: int | None) -> str:
    """An id for a message the host gave none: same session, position, role, time and cleaned
    text, same id."""
    raw = f"{session_key}\x1f{index}\x1f{role}\x1f{timestamp if timestamp is not None else ''}\x1f{text}"
    return "t-" + hashlib.blake2b(raw.encode("utf-8"), digest_size=12).hexdigest()


# --- the commit plan ------------------------------------------------------------------------------


def plan_commit(
    transcript: Sequence[TurnMessage],
    *,
    session_key: str,
    mark: PromptMark | None,
    last_timestamp: int | None,
    extra: Sequence[re.Pattern[str]] = (),
) -> CommitPlan:
    """The new messages of ``transcript``, cleaned and with ids (see the module docstring).
    ``last_timestamp`` is the event time of the session's last stored message, if any."""
    chat = [(i, m) for i, m in enumerate(transcript) if m.role.lower() in _CHAT_ROLES]
    method, selected = _select(chat, len(transcript), mark, last_timestamp)
    target = _turn_prompt(selected, mark)
    ready: list[NewMessage] = []
    dropped: list[str] = []
    for i, m in selected:
        role = Role(m.role.lower())
        text = mark.clean_text if mark is not None and i == target else m.content
        cleaned = strip_noise(text, extra)
        final = None if is_host_event(cleaned) else sanitize(role, cleaned)
        mid = m.id or stable_id(session_key, i, role, final if final is not None else cleaned, m.timestamp)
        if final is None:
            dropped.append(mid)
            continue
        ready.append(NewMessage(role, final, id=mid, name=m.name, timestamp=m.timestamp))
    return CommitPlan(tuple(ready), method, len(chat) - len(selected), target is not None, tuple(dropped))


def _select(
    chat: list[tuple[int, TurnMessage]], length: int, mark: PromptMark | None, last_timestamp: int | None
) -> tuple[Method, list[tuple[int, TurnMessage]]]:
    if chat and all(m.id for _, m in chat):
        return "id", chat
    if mark is not None and mark.count is not None and 0 <= mark.count <= length:
        return "position", [(i, m) for i, m in chat if i >= mark.count]
    if last_timestamp is not None and chat and all(m.timestamp is not None for _, m in chat):
        # At or after: a message sharing the last stored one's millisecond is kept; its stable
        # id (or the host's) makes it a duplicate if it was that one.
        return "timestamp", [(i, m) for i, m in chat if (m.timestamp or 0) >= last_timestamp]
    return "all", chat


def _turn_prompt(selected: list[tuple[int, TurnMessage]], mark: PromptMark | None) -> int | None:
    """The transcript index of the user message ``before_prompt`` saw, or None."""
    if mark is None or not mark.clean_text:
        return None
    users = [i for i, m in selected if m.role.lower() == Role.USER]
    if mark.count is not None:
        return next((i for i in users if i >= mark.count), None)
    return users[-1] if users else None


# --- what before_prompt remembers -----------------------------------------------------------------


class PromptMarks:
    """Prompt marks by session, bounded (oldest forgotten first) and expiring after ``ttl_ms``.
    Thread-safe; kept in memory: after a restart ``turn_committed`` falls back to timestamps and
    stable ids, which still store nothing twice."""

    def __init__(self, capacity: int, ttl_ms: int) -> None:
        self._marks: Lru[PromptMark] = Lru(capacity)
        self._ttl = ttl_ms

    def put(self, key: Hashable, mark: PromptMark) -> None:
        self._marks.put(key, mark)

    def drop(self, doomed: Callable[[Hashable], bool]) -> None:
        """Forget the marks whose keys ``doomed`` picks (an erased tenant's)."""
        self._marks.discard(doomed)

    def pop(self, key: Hashable, now: int) -> PromptMark | None:
        """The session's mark (used once), or None when there is none or it expired."""
        mark = self._marks.pop(key)
        return mark if mark is not None and now - mark.at <= self._ttl else None
