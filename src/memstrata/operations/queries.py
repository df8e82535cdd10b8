"""Operations that find and recall: search, conversation search, recall and the host turn
lifecycle (``before_prompt``, ``turn_committed``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Annotated, Any, ClassVar

from pydantic import Field

from memstrata.layers.host_turns import TurnMessage, TurnResult
from memstrata.models import DEFAULT, DEFAULT_LAYERS, Atom, Layer, SearchResult
from memstrata.operations.base import (
    AtomTypeName,
    Filters,
    Key,
    Limit,
    Millis,
    MinScore,
    Mode,
    Operation,
    PromptText,
    QueryText,
    Route,
    Short,
)
from memstrata.recall import RecallResult


@dataclass(frozen=True, slots=True)
class Search(Operation[SearchResult]):
    """Search memory atoms (L1) and/or raw messages (L0) of one tenant, fused into one ranking
    (``Hit.rank``); each hit's ``score`` is its relevance in [0, 1] and hits below ``min_score``
    are left out. Without ``min_score`` the store's floor applies: a query none of whose hits
    reaches ``search.query_floor`` finds nothing (it is about nothing stored), and the hits of one
    that does are kept down to ``search.min_score``.
    ``filters`` keeps records whose metadata matches (``{"app": "crm"}``, ``{"app": {"in":
    ["crm", "erp"]}}``), applied inside the store's queries."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/search")
    query: QueryText
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT
    limit: Limit = 10
    layers: Iterable[str | Layer] = DEFAULT_LAYERS
    mode: Mode = "hybrid"
    min_score: MinScore | None = None
    type: AtomTypeName | None = None
    scene: Short | None = None
    session_key: Key | None = None
    since: Millis | None = None
    until: Millis | None = None
    include_superseded: bool = False
    filters: Filters | None = None


@dataclass(frozen=True, slots=True)
class SearchConversations(Operation[SearchResult]):
    """Search raw messages (L0) only; ``filters`` as in ``search``."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/search/conversations")
    query: QueryText
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT
    limit: Limit = 10
    session_key: Key | None = None
    mode: Mode = "hybrid"
    since: Millis | None = None
    until: Millis | None = None
    min_score: MinScore | None = None
    filters: Filters | None = None


@dataclass(frozen=True, slots=True)
class Remember(Operation[Atom]):
    """Store ``text`` as a memory atom now (``type`` default ``persona``), with ``metadata`` (a
    JSON object) kept on it, and the note itself as its source message (L0, session
    ``remembered``). Searchable when this returns; no extraction runs on it. Remembering the same
    text again returns the atom it already made."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/remember")
    text: Annotated[str, Field(min_length=1, max_length=20_000)]
    _: KW_ONLY
    user_id: str = DEFAULT
    agent_id: str = DEFAULT
    type: AtomTypeName | None = None
    metadata: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Recall(Operation[RecallResult]):
    """Context for the next prompt: ``system_context`` (persona, scene navigation, tools guide)
    and ``prepend_context`` (relevant memories). Never raises into the agent's turn: within
    ``recall.timeout_ms`` it returns what is ready and says what was left out and why.
    ``filters`` (as in ``search``) narrow the memories; persona and navigation stay whole."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/recall")
    query: QueryText
    _: KW_ONLY
    session_key: Key | None = None
    user_id: str = DEFAULT
    agent_id: str = DEFAULT
    tools: Annotated[
        bool,
        Field(
            description="Whether the host gives its model the memory tools; False leaves the tools guide out."
        ),
    ] = True
    filters: Filters | None = None


@dataclass(frozen=True, slots=True)
class BeforePrompt(Operation[RecallResult]):
    """A host is about to call its model with the user's ``prompt``: recall for it, and remember
    the clean prompt and ``transcript_length`` (messages before the prompt) for the session's
    ``turn_committed``. Returns recall's ``system_context`` and ``prepend_context``."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/turns/before-prompt")
    prompt: PromptText
    _: KW_ONLY
    session_key: Key = DEFAULT
    transcript_length: (
        Annotated[
            int,
            Field(
                ge=0,
                le=10**6,
                description="Messages in the host's transcript before this prompt (enables position slicing).",
            ),
        ]
        | None
    ) = None
    user_id: str = DEFAULT
    agent_id: str = DEFAULT
    tools: Annotated[
        bool,
        Field(
            description="Whether the host gives its model the memory tools; False leaves the tools guide out."
        ),
    ] = True
    memory_chars: (
        Annotated[
            int,
            Field(
                ge=0,
                le=10**6,
                description=(
                    "The memories' own budget in characters (tags included), for a host that puts them "
                    "apart from the system context; fewer search hits are considered for a smaller one. "
                    "Default: what recall.total_chars leaves after the system context."
                ),
            ),
        ]
        | None
    ) = None


@dataclass(frozen=True, slots=True)
class TurnCommitted(Operation[TurnResult]):
    """A turn is over: store what is new in ``messages`` (the host may send its whole
    transcript), cleaned, the polluted prompt replaced by the clean one ``before_prompt`` saw.
    ``stored_before``: the first that many messages are stored already (a host that committed
    its prompt while the model was answering, then commits the answer): only later ones are new."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/turns/committed")
    messages: Sequence[TurnMessage | Mapping[str, object]]
    _: KW_ONLY
    session_key: Key = DEFAULT
    session_id: Key | None = None
    stored_before: (
        Annotated[
            int,
            Field(
                ge=0,
                le=10**6,
                description="Messages at the start of the transcript stored already (position slicing).",
            ),
        ]
        | None
    ) = None
    user_id: str = DEFAULT
    agent_id: str = DEFAULT
