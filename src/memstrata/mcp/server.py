"""The MCP server (official ``mcp`` SDK): the agent tools over one memory.

    memory_search        memory atoms (facts, events, instructions)
    conversation_search  the raw past messages
    read_scene           a whole scene document from the navigation
    remember             store a note, or a turn (the user's message and the reply)
    recall               the context for a prompt (persona, scene navigation, memories)

Served over stdio (``memstrata mcp``) and streamable HTTP (``/mcp`` in the gateway). The tenant
comes from the configuration, or, over HTTP, from the connection's ``x-memstrata-user-id`` /
``x-memstrata-agent-id`` headers, resolved by the gateway's one rule (``resolve``: validated, and
checked against the request's key, so a key scoped to alice never reaches bob). An MCP session is
bound to the tenant of its first tool call: a later call naming another tenant is refused (the
sessionless protocol of 2026 has no session: each request then stands alone, checked by its key).

A turn may make at most 3 searches (as ``MemoryTools``): a turn is the ``turn_id`` a call names,
else the stretch of a connection between ``recall`` / ``remember`` calls (an agent recalls at the
start of a turn and remembers at its end). Turns are counted per tenant and connection, so one
client's turn id never uses up another's searches.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from memstrata.errors import AccessError, MemstrataError, TurnLimitError
from memstrata.lru import Lru
from memstrata.models import DEFAULT, Tenant
from memstrata.operations import MemoryApi, Who
from memstrata.operations import arguments as args
from memstrata.recall import TOOLS_GUIDE
from memstrata.tools import SCHEMAS, TurnLimiter, hit_json, nothing_found, scene_json

R = TypeVar("R")
USER_HEADER = "x-memstrata-user-id"
AGENT_HEADER = "x-memstrata-agent-id"
Limit = Annotated[int, Field(ge=1, le=20, description="How many results.")]
Query = Annotated[
    str, Field(min_length=1, max_length=2000, description="What to look for, in a few precise words.")
]
# How the gateway resolves a tool call's tenant: (the HTTP request or None, the user and agent
# the call names or None) -> the tenant, or AccessError / InputError.
Resolve = Callable[[Any, str | None, str | None], Tenant]
MAX_BOUND = 10_000  # sessions whose tenant is remembered (least recently used forgotten)
MAX_CONNECTIONS = 10_000  # connections whose turn number is remembered (least recently used forgotten)

# The memory's metadata filters (``models.filters``), for hosts that tag what they capture.
Filters = Annotated[
    dict[str, Any] | None,
    Field(description='Only records whose metadata matches: {"key": value} or {"key": {"in": [values]}}.'),
]
TurnId = Annotated[
    str | None, Field(max_length=200, description="The agent's turn; at most 3 searches per turn.")
]


class Turns:
    """Turn numbers per connection: ``recall`` and ``remember`` start a new turn."""

    def __init__(self) -> None:
        self._numbers: Lru[int] = Lru(MAX_CONNECTIONS)

    def current(self, connection: str, turn_id: str | None) -> str:
        if turn_id:
            return f"id:{turn_id}"
        return f"{connection}#{self._numbers.get(connection) or 0}"

    def next(self, connection: str) -> None:
        self._numbers.update(connection, lambda n: (n or 0) + 1)


class Bindings:
    """The tenant each MCP session was first used for (the least recently used forgotten first)."""

    def __init__(self) -> None:
        self._tenants: Lru[Tenant] = Lru(MAX_BOUND)

    def bind(self, connection: str, tenant: Tenant) -> Tenant:
        bound = self._tenants.update(connection, lambda first: tenant if first is None else first)
        if bound != tenant:
            # Say nothing of the session's tenant: the caller may not be its owner.
            raise AccessError("this MCP session is bound to another tenant: open a new session")
        return tenant


def _connection(ctx: Context) -> str:
    headers = _headers(ctx)
    return headers.get("mcp-session-id", "http") if headers is not None else "local"


def _headers(ctx: Context) -> Mapping[str, str] | None:
    try:
        return ctx.headers
    except ValueError:  # no request (a direct call)
        return None


def _request(ctx: Context) -> Any:
    try:
        return ctx.request_context.request
    except ValueError:  # no request (a direct call)
        return None


def build_server(
    memory: Callable[[], MemoryApi],
    *,
    user_id: str = DEFAULT,
    agent_id: str = DEFAULT,
    limiter: TurnLimiter | None = None,
    resolve: Resolve | None = None,
) -> MCPServer:
    """An MCP server whose tools call ``memory()`` (an ``AsyncMemory`` or the HTTP client);
    ``resolve`` is the gateway's tenant rule (without it, over stdio: the configured tenant, or
    the headers', validated)."""
    # log_level: the SDK configures the root logger when nothing else has; keep it quiet then.
    server: MCPServer = MCPServer(name="memstrata", instructions=TOOLS_GUIDE, log_level="WARNING")
    limits = limiter or TurnLimiter()
    turns = Turns()
    bindings = Bindings()

    def configured(_request: Any, user: str | None, agent: str | None) -> Tenant:
        return args.tenant(user or user_id, agent or agent_id)

    def current(ctx: Context) -> Tenant:
        headers = _headers(ctx) or {}
        try:
            t = (resolve or configured)(_request(ctx), headers.get(USER_HEADER), headers.get(AGENT_HEADER))
            session_id = headers.get("mcp-session-id")  # none in the sessionless 2026 protocol
            return bindings.bind(session_id, t) if session_id else t
        except MemstrataError as exc:
            raise ToolError(exc.message) from exc

    def tenant(ctx: Context) -> Who:
        t = current(ctx)
        return {"user_id": t.user_id, "agent_id": t.agent_id}

    def count(ctx: Context, turn_id: str | None) -> None:
        t, connection = current(ctx), _connection(ctx)
        turn = turns.current(connection, turn_id)
        try:
            limits.count(f"{t.user_id}\x00{t.agent_id}\x00{connection}\x00{turn}")
        except TurnLimitError as exc:
            raise ToolError(str(TurnLimitError(turn_id or turn, exc.limit))) from exc

    @server.tool(description=SCHEMAS["memory_search"]["description"])
    async def memory_search(
        query: Query,
        ctx: Context,
        limit: Limit = 5,
        type: Literal["persona", "episodic", "instruction"] | None = None,
        scene: Annotated[str | None, Field(max_length=200)] = None,
        filters: Filters = None,
        turn_id: TurnId = None,
    ) -> list[dict[str, Any]] | str:
        count(ctx, turn_id)
        hits = await _call(
            memory().search(
                query, limit=limit, type=type, scene=scene, layers=("L1",), filters=filters, **tenant(ctx)
            )
        )
        return [hit_json(h) for h in hits] or nothing_found("memory", query)

    @server.tool(description=SCHEMAS["conversation_search"]["description"])
    async def conversation_search(
        query: Query,
        ctx: Context,
        limit: Limit = 5,
        session_key: Annotated[str | None, Field(max_length=512)] = None,
        filters: Filters = None,
        turn_id: TurnId = None,
    ) -> list[dict[str, Any]] | str:
        count(ctx, turn_id)
        hits = await _call(
            memory().search_conversations(
                query, limit=limit, session_key=session_key, filters=filters, **tenant(ctx)
            )
        )
        return [hit_json(h) for h in hits] or nothing_found("past message", query)

    @server.tool(description=SCHEMAS["read_scene"]["description"])
    async def read_scene(
        path: Annotated[str, Field(min_length=1, max_length=512)], ctx: Context
    ) -> dict[str, Any]:
        return scene_json(await _call(memory().read_scene(path, **tenant(ctx))))

    @server.tool(
        description="Store something in long-term memory: a note (what to remember, as the user "
        "said it; a memory at once, found by memory_search right away), or a whole turn (the "
        "user's message and your reply, given as reply; distilled into memories in the background)."
    )
    async def remember(
        content: Annotated[
            str, Field(min_length=1, max_length=20_000, description="The note, or the user's message.")
        ],
        ctx: Context,
        reply: Annotated[
            str | None, Field(max_length=20_000, description="Your reply, to store a turn.")
        ] = None,
        session_key: Annotated[str, Field(min_length=1, max_length=512)] = "mcp",
    ) -> dict[str, Any]:
        turns.next(_connection(ctx))
        if not reply:
            atom = await _call(memory().remember(content, **tenant(ctx)))
            return {"remembered": atom.id, "content": atom.content, "searchable": True}
        messages = [{"role": "user", "content": content}, {"role": "assistant", "content": reply}]
        done = await _call(memory().capture(messages, session_key=session_key, **tenant(ctx)))
        return {"stored": [m.id for m in done.stored], "dropped": list(done.dropped)}

    @server.tool(
        description="The long-term context for the user's next message: who the user is "
        "(persona), the scene navigation and the memories relevant to the message. Call it at the "
        "start of a turn."
    )
    async def recall(
        query: Annotated[str, Field(max_length=20_000, description="The user's message.")],
        ctx: Context,
        session_key: Annotated[str | None, Field(max_length=512)] = None,
    ) -> dict[str, Any]:
        turns.next(_connection(ctx))
        r = await _call(memory().recall(query, session_key=session_key, **tenant(ctx)))
        return {
            "system_context": r.system_context,
            "prepend_context": r.prepend_context,
            "degradations": list(r.degradations),
        }

    return server


async def _call(pending: Awaitable[R]) -> R:
    """Await a memory call; memstrata errors become tool errors the model can read."""
    try:
        return await pending
    except MemstrataError as exc:
        raise ToolError(exc.message) from exc
