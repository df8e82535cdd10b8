"""What an OpenAI-compatible server's error means, read from its status and its own words.

Servers agree on HTTP statuses but not on wording: llama.cpp answers a prompt longer than its
context with 400 "the request exceeds the available context size", vLLM with "This model's
maximum context length is N tokens", OpenAI with the code ``context_length_exceeded``; a server
without tool calling answers 400 naming ``tools`` (llama.cpp: "tools param requires --jinja").
"""

from __future__ import annotations

import re

import openai

_CONTEXT = re.compile(
    r"context[ _]length|context size|context window|maximum context|exceed_context|"
    r"too many tokens|prompt is too long|input is too long|n_ctx",
    re.IGNORECASE,
)
_TOOLS = re.compile(r"\btools?\b|tool[ _]choice|function[ _]call", re.IGNORECASE)
_FORMAT = re.compile(r"response_format|json_schema|json_object|grammar|schema", re.IGNORECASE)

DETAIL_CHARS = 300


def detail(exc: openai.APIStatusError) -> str:
    """The server's own error message when it sent the usual ``{"error": {"message": ...}}``."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message = error.get("message") or error.get("code") or error.get("type")
        else:
            message = error
        if message:
            code = error.get("code") if isinstance(error, dict) else None
            text = str(message)
            return (f"{text} ({code})" if code and str(code) not in text else text)[:DETAIL_CHARS]
    return exc.message[:DETAIL_CHARS]


def is_context_length(exc: openai.APIStatusError) -> bool:
    """A 400 (or 413) saying the prompt does not fit the model's context."""
    return exc.status_code in (400, 413) and bool(_CONTEXT.search(detail(exc) + " " + exc.message))


def is_tools_refused(exc: openai.APIStatusError) -> bool:
    """A 400 that names the request's tools (and not its response format)."""
    text = detail(exc)
    return exc.status_code == 400 and bool(_TOOLS.search(text)) and not _FORMAT.search(text)


def is_transient(exc: Exception) -> bool:
    """Worth the same request again after a pause: timeouts, lost connections, 429 and 5xx."""
    if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError):
        return True
    return isinstance(exc, openai.APIStatusError) and (exc.status_code == 429 or exc.status_code >= 500)
