"""``ChatModel`` for any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio, DeepSeek, ...).

Built on the official ``openai`` SDK with its retries switched off: the pipeline scheduler owns
retries and backoff, so one ``complete`` is one request (two when JSON mode has to be dropped).
Every failure leaves as ``ModelError``, naming the model, the base URL and the HTTP status, never
the API key.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Sequence

import openai
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionAssistantMessageParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageParam,
)

from memstrata.errors import ConfigError, ModelError
from memstrata.models import ChatMessage, ChatReply, ToolCall, ToolSpec

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers ignore the key, but the SDK refuses to start without one.
_PLACEHOLDER_KEY = "not-needed"
_DETAIL_CHARS = 300


class OpenAIChatModel:
    """One chat completion per ``complete`` call against ``base_url`` (``.../v1``).

    ``json_mode`` allows sending ``response_format={"type": "json_object"}`` when a caller asks for
    JSON; when the server answers 400, the call is retried once without it, and if that works the
    instance stops sending it. ``tools`` become OpenAI function tools and the reply's tool calls
    become ``ToolCall``s.
    Raises ``ModelError`` on timeout, connection failure, HTTP error, refusal or a malformed answer.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        timeout_seconds: float = 60,
        max_tokens: int = 4096,
        json_mode: bool = True,
    ) -> None:
        if not model:
            raise ConfigError("the OpenAI-compatible chat model needs a model name (llm.model)")
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.timeout_seconds = timeout_seconds
        self.max_tokens = max_tokens
        self._api_key = api_key
        self._send_response_format = json_mode
        # An HTTP connection pool belongs to one event loop, so each loop gets its own client
        # (e.g. a caller that runs ``asyncio.run`` twice); it goes away with its loop.
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI]
        self._clients = weakref.WeakKeyDictionary()

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        tools: Sequence[ToolSpec] = (),
    ) -> ChatReply:
        """Send ``messages`` (and ``tools``) and return the first choice as a ``ChatReply``."""
        params = [_message_param(m) for m in messages]
        tool_params = [_tool_param(t) for t in tools]
        try:
            completion = await self._create_with_fallback(params, tool_params, json_mode)
            return self._reply(completion)
        except ModelError:
            raise
        except Exception as exc:  # anything the SDK raises, typed or not, is a model failure
            raise self._error(exc) from exc

    async def aclose(self) -> None:
        """Close the HTTP connection pool of the running event loop."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def _client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._api_key or _PLACEHOLDER_KEY,
                timeout=self.timeout_seconds,
                max_retries=0,
            )
            self._clients[loop] = client
        return client

    async def _create_with_fallback(
        self,
        params: list[ChatCompletionMessageParam],
        tool_params: list[ChatCompletionFunctionToolParam],
        json_mode: bool,
    ) -> ChatCompletion:
        with_format = json_mode and self._send_response_format
        try:
            return await self._create(params, tool_params, with_format)
        except openai.BadRequestError as exc:
            if not with_format:
                raise
            logger.warning(
                "chat model %r at %s answered 400 to response_format (%s); retrying without it",
                self.model,
                self.base_url,
                self._redact(_detail(exc)),
            )
        completion = await self._create(params, tool_params, False)
        # The same request succeeded without it: the server does not support JSON mode.
        self._send_response_format = False
        return completion

    async def _create(
        self,
        params: list[ChatCompletionMessageParam],
        tool_params: list[ChatCompletionFunctionToolParam],
        with_format: bool,
    ) -> ChatCompletion:
        return await self._client().chat.completions.create(
            model=self.model,
            messages=params,
            max_tokens=self.max_tokens,
            response_format={"type": "json_object"} if with_format else openai.omit,
            tools=tool_params or openai.omit,
        )

    def _reply(self, completion: ChatCompletion) -> ChatReply:
        if not completion.choices:
            raise ModelError(f"chat model {self.model!r} at {self.base_url} returned no choices")
        choice = completion.choices[0]
        message = choice.message
        if message.refusal:
            raise ModelError(f"chat model {self.model!r} refused: {message.refusal[:_DETAIL_CHARS]}")
        if choice.finish_reason == "length":
            logger.warning("chat model %r stopped at max_tokens=%d", self.model, self.max_tokens)
        calls: list[ToolCall] = []
        for call in message.tool_calls or ():
            if call.type == "function":
                calls.append(ToolCall(call.id, call.function.name, call.function.arguments))
            else:
                calls.append(ToolCall(call.id, call.custom.name, call.custom.input))
        usage = completion.usage
        return ChatReply(
            content=message.content or "",
            tool_calls=tuple(calls),
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )

    def _error(self, exc: Exception) -> ModelError:
        where = f"chat model {self.model!r} at {self.base_url}"
        if isinstance(exc, openai.APITimeoutError):
            text = f"{where} timed out after {self.timeout_seconds:g} s"
        elif isinstance(exc, openai.APIConnectionError):
            text = f"cannot connect to {where}: {exc.__cause__ or exc}"
        elif isinstance(exc, openai.APIStatusError):
            text = f"{where} answered HTTP {exc.status_code}: {_detail(exc)}"
        else:
            text = f"{where} failed: {type(exc).__name__}: {exc}"
        return ModelError(self._redact(text))

    def _redact(self, text: str) -> str:
        # Servers sometimes echo the request; the key must never reach logs or error messages.
        return text.replace(self._api_key, "***") if self._api_key else text


def _detail(exc: openai.APIStatusError) -> str:
    """The server's own error message when it sent the usual ``{"error": {"message": ...}}``."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return str(message)[:_DETAIL_CHARS]
    return exc.message[:_DETAIL_CHARS]


def _message_param(message: ChatMessage) -> ChatCompletionMessageParam:
    if message.role == "system":
        return {"role": "system", "content": message.content}
    if message.role == "user":
        return {"role": "user", "content": message.content}
    if message.role == "tool":
        return {"role": "tool", "content": message.content, "tool_call_id": message.tool_call_id or ""}
    # An assistant turn that only called tools has no text; servers expect null content then.
    param: ChatCompletionAssistantMessageParam = {
        "role": "assistant",
        "content": message.content if message.content or not message.tool_calls else None,
    }
    if message.tool_calls:
        param["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    return param


def _tool_param(spec: ToolSpec) -> ChatCompletionFunctionToolParam:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": dict(spec.parameters),
        },
    }
