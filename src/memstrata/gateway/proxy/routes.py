"""The proxy's routes: only a base URL changes for the client.

    POST /proxy/openai/v1/chat/completions     OpenAI Chat Completions, with memory
    POST /proxy/openai/v1/responses            OpenAI Responses, with memory
    *    /proxy/openai/v1/{path}               anything else, forwarded (models, embeddings, ...)
    POST /proxy/anthropic/v1/messages          Anthropic Messages, with memory
    *    /proxy/anthropic/{path}               anything else, forwarded (count_tokens, models, ...)

``OPENAI_BASE_URL=http://127.0.0.1:8420/proxy/openai/v1``,
``ANTHROPIC_BASE_URL=http://127.0.0.1:8420/proxy/anthropic``.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from memstrata.gateway.proxy.anthropic_messages import AnthropicMessages
from memstrata.gateway.proxy.exchange import model_call, pass_through
from memstrata.gateway.proxy.openai_chat import OpenAIChat
from memstrata.gateway.proxy.openai_responses import OpenAIResponses
from memstrata.gateway.proxy.state import ProxyState

router = APIRouter(prefix="/proxy", tags=["proxy"], include_in_schema=False)
_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
_CHAT, _RESPONSES, _MESSAGES = OpenAIChat(), OpenAIResponses(), AnthropicMessages()


def _state(request: Request) -> ProxyState:
    state: ProxyState = request.app.state.proxy
    return state


@router.post("/openai/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    return await model_call(request, _CHAT, _state(request).config.openai, "chat/completions")


@router.post("/openai/v1/responses")
async def responses(request: Request) -> Response:
    return await model_call(request, _RESPONSES, _state(request).config.openai, "responses")


@router.post("/anthropic/v1/messages")
async def messages(request: Request) -> Response:
    return await model_call(request, _MESSAGES, _state(request).config.anthropic, "v1/messages")


# The path goes upstream as sent under the prefix (``upstream.forwarded_path`` reads it from the
# raw request path and refuses what could leave the upstream's base path), not as routed.
@router.api_route("/openai/v1/{path:path}", methods=_METHODS)
async def openai_other(request: Request, path: str) -> Response:
    return await pass_through(request, _state(request).config.openai, "/proxy/openai/v1")


@router.api_route("/anthropic/{path:path}", methods=_METHODS)
async def anthropic_other(request: Request, path: str) -> Response:
    return await pass_through(request, _state(request).config.anthropic, "/proxy/anthropic")
