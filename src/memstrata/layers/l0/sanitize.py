"""L0 sanitize: clean a captured message before it is stored, or decide to drop it.

Pure functions, no I/O. The rules, in order:

1. Line endings become ``\\n``; NUL and the other C0 control characters except ``\\n`` and ``\\t``
   are removed (they break FTS tokenizers, JSONL mirrors and terminals).
2. Memory blocks that recall injected into the prompt (``<relevant-memories>``, ``<user-persona>``,
   ``<scene-navigation>``, ``<memory-tools-guide>``) are removed, case-insensitively and across
   lines; an opening tag that is never closed removes everything after it. Storing them would feed
   memories back into memory.
3. Base64 images (``data:image/...;base64,...`` URIs, Markdown or HTML images of them) become
   ``[image]``: kilobytes of noise for search and extraction.
4. Fenced code blocks (```` ``` ```` or ``~~~``; an unclosed fence runs to the end) are kept, in
   both roles: in technical chats the evidence a later question needs is often in an assistant's
   code (BEAM), so the message is stored and indexed whole. Extraction reads an assistant message
   without them (``for_extraction``): code makes no memory atom.
5. Runs of blank lines collapse to one blank line; the text is trimmed.
6. The message is dropped (``None``) when nothing is left, when it is a slash command
   (``/reset``, ``/help foo``), or when it is pure noise: after lowercasing and removing
   punctuation and emoji it is one of ``NOISE`` or nothing at all (e.g. "👍", "...").
"""

from __future__ import annotations

import re

from memstrata.models import Role
from memstrata.retrieval.fences import strip_code_blocks

# Exact acknowledgements and agent-runtime sentinels that carry nothing to remember. Kept small on
# purpose: anything with more words ("Thanks, Mel!", "ok, see you at 5") is kept.
NOISE: frozenset[str] = frozenset(
    {
        "ok",
        "okay",
        "k",
        "kk",
        "thanks",
        "thank you",
        "thx",
        "ty",
        "noted",
        "got it",
        "heartbeat",
        "heartbeat_ok",
        "no_reply",
    }
)

_MEMORY_TAGS = "relevant-memories|user-persona|scene-navigation|memory-tools-guide"
_MEMORY_BLOCK = re.compile(rf"<({_MEMORY_TAGS})\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_MEMORY_UNCLOSED = re.compile(rf"<(?:{_MEMORY_TAGS})\b[^>]*>.*\Z", re.IGNORECASE | re.DOTALL)
_MEMORY_STRAY_CLOSE = re.compile(rf"</(?:{_MEMORY_TAGS})\s*>", re.IGNORECASE)

_DATA_URI = r"data:image/[\w.+-]+;base64,[A-Za-z0-9+/=]*"
_MARKDOWN_IMAGE = re.compile(rf"!\[[^\]\n]*\]\(\s*{_DATA_URI}[^)]*\)", re.IGNORECASE)
_HTML_IMAGE = re.compile(rf"<img\b[^>]*?src\s*=\s*[\"']?{_DATA_URI}[^>]*>", re.IGNORECASE)
_BARE_DATA_URI = re.compile(_DATA_URI, re.IGNORECASE)

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")
_BLANK_RUN = re.compile(r"\n(?:[ \t]*\n){2,}")
_SLASH_COMMAND = re.compile(r"^/[A-Za-z][\w-]*(?:\s|$)")
_WORD = re.compile(r"\w+")
_NOISE_WORDS = max(len(n.split()) for n in NOISE)


def sanitize(role: Role, content: str) -> str | None:
    """The cleaned text of a message, or None when it must not be stored (see the module rules)."""
    text = content.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    text = strip_memory_blocks(text)
    text = replace_images(text)
    text = _BLANK_RUN.sub("\n\n", text).strip()
    if not text or is_slash_command(text) or is_noise(text):
        return None
    return text


def strip_memory_blocks(text: str) -> str:
    """Remove injected memory blocks, an unclosed one to the end of the text, and stray closers."""
    text = _MEMORY_BLOCK.sub("", text)
    text = _MEMORY_UNCLOSED.sub("", text)
    return _MEMORY_STRAY_CLOSE.sub("", text)


def replace_images(text: str) -> str:
    """Replace base64 images (Markdown, HTML, or a bare data URI) with ``[image]``."""
    text = _MARKDOWN_IMAGE.sub("[image]", text)
    text = _HTML_IMAGE.sub("[image]", text)
    return _BARE_DATA_URI.sub("[image]", text)


def for_extraction(role: Role, text: str) -> str:
    """What extraction reads of a stored message: an assistant's fenced code blocks become
    ``[code]`` (as capture stored them before code was kept), a user's code is what they said."""
    return strip_code_blocks(text) if role == Role.ASSISTANT else text


def is_slash_command(text: str) -> bool:
    """Whether the text is a chat command: ``/`` and a word at the very start (``/reset``)."""
    return _SLASH_COMMAND.match(text) is not None


def is_noise(text: str) -> bool:
    """Whether the text is a bare acknowledgement or sentinel (``NOISE``), or has no word at all.

    Reads words only until there are more than any ``NOISE`` entry has: a long message costs no
    more than a short one (normalising all of it took gigabytes for a 50 MB message)."""
    words: list[str] = []
    for match in _WORD.finditer(text):
        words.append(match.group().lower())
        if len(words) > _NOISE_WORDS:
            return False
    return not words or " ".join(words) in NOISE
