"""``ChatModel`` for any OpenAI-compatible endpoint (OpenAI, llama.cpp, vLLM, Ollama, LM Studio, ...).

Built on the official ``openai`` SDK with its own retries switched off: this adapter retries
transient failures (timeouts, lost connections, 429, 5xx) ``retries`` times with exponential
backoff, and the pipeline scheduler retries the stage after that. Structured outputs are detected
once per endpoint: ``json_schema`` first, then ``json_object``, then none (see
``StructuredOutput``). Every failure leaves as ``ModelError`` (``ContextLengthError``,
``ToolsUnsupportedError`` where the server says so), naming the model, the base URL and the HTTP
status, never the API key.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Sequence
from typing import Any, Literal

import openai
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionAssistantMessageParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageParam,
)

from memstrata.errors import ConfigError, ContextLengthError, ModelError, ToolsUnsupportedError
from memstrata.llm.server_errors import (
    DETAIL_CHARS,
    detail,
    is_context_length,
    is_tools_refused,
    is_transient,
)
from memstrata.models import ChatMessage, ChatReply, Degradations, ResponseSchema, ToolCall, ToolSpec

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers ignore the key, but the SDK refuses to start without one.
_PLACEHOLDER_KEY = "not-needed"
_MAX_BACKOFF_SECONDS = 30.0

# What a JSON call sends as ``response_format``: "auto" probes json_schema, then json_object,
# then nothing, and keeps the first the server accepts; the others fix one level (no probing).
StructuredOutput = Literal["auto", "json_schema", "json_object", "off"]
_LEVELS: tuple[str, ...] = ("json_schema", "json_object", "off")


class OpenAIChatModel:
    """One chat completion per ``complete`` call against ``base_url`` (``.../v1``).

    A JSON call (``json_mode`` or ``schema``) sends the richest ``response_format`` the server
    supports: a 400 to one level is answered by trying the next with the same request, and when
    that works the instance stops sending the refused one (counted in ``degradations`` as
    ``structured_output_fallback``). ``tools`` become OpenAI function tools and the reply's tool
    calls become ``ToolCall``s. ``concurrency`` caps requests in flight (0: no cap; a local
    server with one slot wants 1).
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
        *,
        structured_output: StructuredOutput = "auto",
        retries: int = 2,
        backoff_seconds: float = 1.0,
        concurrency: int = 0,
        degradations: Degradations | None = None,
    ) -> None:
        if not model:
            raise ConfigError("the OpenAI-compatible chat model needs a model name (llm.model)")
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.timeout_seconds = timeout_seconds
        self.max_tokens = max_tokens
        self.retries = max(0, retries)
        self.backoff_seconds = backoff_seconds
        self.concurrency = concurrency
        self.degradations = degradations if degradations is not None else Degradations()
        self._api_key = api_key
        self._probing = structured_output == "auto" and json_mode
        self._level = _LEVELS.index(
            "off" if not json_mode else structured_output.replace("auto", "json_schema")
        )
        # An HTTP connection pool belongs to one event loop, so each loop gets its own client
        # (e.g. a caller that runs ``asyncio.run`` twice); it goes away with its loop.
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI]
        self._clients = weakref.WeakKeyDictionary()
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._gates = weakref.WeakKeyDictionary()

    @property
    def structured_output(self) -> str:
        """What a schema call sends now: ``json_schema``, ``json_object`` or ``off``."""
        return _LEVELS[self._level]

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        schema: ResponseSchema | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> ChatReply:
        """Send ``messages`` (and ``tools``) and return the first choice as a ``ChatReply``."""
        request = _Request(
            [_message_param(m) for m in messages],
            [_tool_param(t) for t in tools],
            schema,
            json_mode or schema is not None,
            max_tokens or self.max_tokens,
        )
        try:
            async with self._gate():
                completion = await self._with_retries(request)
            return self._reply(completion, request.max_tokens)
        except ModelError:
            raise
        except Exception as exc:  # anything the SDK raises, typed or not, is a model failure
            raise self._error(exc, request) from exc

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

    def _gate(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        gate = self._gates.get(loop)
        if gate is None:
            gate = asyncio.Semaphore(self.concurrency if self.concurrency > 0 else 1 << 20)
            self._gates[loop] = gate
        return gate

    async def _with_retries(self, request: _Request) -> ChatCompletion:
        for attempt in range(self.retries + 1):
            try:
                return await self._create_with_fallback(request)
            except Exception as exc:
                if attempt == self.retries or not is_transient(exc):
                    raise
                delay = min(self.backoff_seconds * 2**attempt, _MAX_BACKOFF_SECONDS)
                self.degradations.add("model_retries")
                logger.warning(
                    "chat model %r at %s failed (%s); retry %d of %d in %.1f s",
                    self.model,
                    self.base_url,
                    type(exc).__name__,
                    attempt + 1,
                    self.retries,
                    delay,
                )
                await asyncio.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _create_with_fallback(self, request: _Request) -> ChatCompletion:
        """The request at the richest format the server takes, stepping down on a 400 to it."""
        level = self._level if request.wants_json else _LEVELS.index("off")
        if request.schema is None and level == 0:
            level = 1  # no schema to send: JSON mode is the most there is
        while True:
            try:
                completion = await self._create(request, _LEVELS[level])
            except openai.BadRequestError as exc:
                if _LEVELS[level] == "off" or not self._probing or is_context_length(exc):
                    raise
                logger.warning(
                    "chat model %r at %s answered 400 to response_format %s (%s); trying %s",
                    self.model,
                    self.base_url,
                    _LEVELS[level],
                    self._redact(detail(exc)),
                    _LEVELS[level + 1],
                )
                level += 1
                continue
            if request.wants_json and level > self._level:
                # The same request worked with less: the server lacks the richer format.
                self._level = level
                self.degradations.add("structured_output_fallback")
            return completion

    async def _create(self, request: _Request, level: str) -> ChatCompletion:
        response_format: Any = openai.omit
        if level == "json_schema" and request.schema is not None:
            response_format = {
                "type": "json_schema",
                "json_schema": {"name": request.schema.name, "schema": dict(request.schema.schema)},
            }
        elif level in ("json_schema", "json_object"):
            response_format = {"type": "json_object"}
        completion: ChatCompletion = await self._client().chat.completions.create(
            model=self.model,
            messages=request.messages,
            max_tokens=request.max_tokens,
            response_format=response_format,
            tools=request.tools or openai.omit,
        )
        return completion

    def _reply(self, completion: ChatCompletion, max_tokens: int) -> ChatReply:
        if not completion.choices:
            raise ModelError(f"chat model {self.model!r} at {self.base_url} returned no choices")
        choice = completion.choices[0]
        message = choice.message
        if message.refusal:
            raise ModelError(f"chat model {self.model!r} refused: {message.refusal[:DETAIL_CHARS]}")
        if choice.finish_reason == "length":
            logger.warning("chat model %r stopped at max_tokens=%d", self.model, max_tokens)
        calls: list[ToolCall] = []
        for call in message.tool_calls or ():
            if call.type == "function":
                calls.append(ToolCall(call.id, call.function.name, call.function.arguments))
            else:
                calls.append(ToolCall(call.id, call.custom.name, call.custom.input))
        usage = completion.usage
        finish: object = choice.finish_reason  # typed as never None, but some servers send null
        return ChatReply(
            content=message.content or "",
            tool_calls=tuple(calls),
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            finish_reason=str(finish) if finish else "stop",
        )

    def _error(self, exc: Exception, request: _Request) -> ModelError:
        where = f"chat model {self.model!r} at {self.base_url}"
        if isinstance(exc, openai.APITimeoutError):
            return ModelError(f"{where} timed out after {self.timeout_seconds:g} s")
        if isinstance(exc, openai.APIConnectionError):
            return ModelError(self._redact(f"cannot connect to {where}: {exc.__cause__ or exc}"))
        if isinstance(exc, openai.APIStatusError):
            text = self._redact(f"{where} answered HTTP {exc.status_code}: {detail(exc)}")
            if is_context_length(exc):
                return ContextLengthError(text)
            if request.tools and is_tools_refused(exc):
                return ToolsUnsupportedError(text)
            return ModelError(text)
        return ModelError(self._redact(f"{where} failed: {type(exc).__name__}: {exc}"))

    def _redact(self, text: str) -> str:
        # Servers sometimes echo the request; the key must never reach logs or error messages.
        return text.replace(self._api_key, "***") if self._api_key else text


class _Request:
    """One ``complete`` call's parts, as the SDK takes them."""

    __slots__ = ("max_tokens", "messages", "schema", "tools", "wants_json")

    def __init__(
        self,
        messages: list[ChatCompletionMessageParam],
        tools: list[ChatCompletionFunctionToolParam],
        schema: ResponseSchema | None,
        wants_json: bool,
        max_tokens: int,
    ) -> None:
        self.messages = messages
        self.tools = tools
        self.schema = schema
        self.wants_json = wants_json
        self.max_tokens = max_tokens


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
