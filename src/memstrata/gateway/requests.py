"""Request models of the native API. Bounds are declared here, so a bad value is a 422 naming
the field before anything runs; the facade checks the rest (and names the field too)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from memstrata.models import DEFAULT_LAYERS

Id = Annotated[str, StringConstraints(min_length=1, max_length=512)]
Key = Annotated[str, StringConstraints(min_length=1, max_length=512)]
Millis = Annotated[int, Field(ge=0, le=10**15, description="Epoch milliseconds.")]
Limit = Annotated[int, Field(ge=1, le=1000)]
MinScore = Annotated[
    float | None,
    Field(ge=0, le=1, description="Relevance floor in [0, 1]; null: the server's search.min_score."),
]
MAX_BATCH = 100  # messages per capture
MAX_TRANSCRIPT = 5000  # messages per turn_committed
MAX_IDS = 5000  # ids per delete


def _check_text(value: Any, where: str) -> None:
    """Strings must be encodable (JSON can carry lone surrogates; no store can keep them)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{where}: not valid Unicode text (lone surrogate)") from None
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_text(k, where)
            _check_text(v, f"{where}.{k}")
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _check_text(v, f"{where}[{i}]")


class Body(BaseModel):
    """Base of request bodies: unknown fields are errors, every string is valid Unicode."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _unicode(self) -> Body:
        for name in type(self).model_fields:
            _check_text(getattr(self, name), name)
        return self


class TenantBody(Body):
    """The tenant: these fields, else the ``x-memstrata-user-id`` / ``x-memstrata-agent-id``
    headers, else ``default``."""

    user_id: Id | None = None
    agent_id: Id | None = None


class MessageIn(Body):
    role: Literal["user", "assistant"]
    content: Annotated[str, StringConstraints(max_length=200_000)]
    id: Id | None = None
    name: Annotated[str, StringConstraints(max_length=200)] | None = None
    timestamp: Millis | None = None


class CaptureIn(TenantBody):
    messages: Annotated[list[MessageIn], Field(min_length=1, max_length=MAX_BATCH)]
    session_key: Key = "default"
    session_id: Key | None = None


class RememberIn(TenantBody):
    text: Annotated[str, StringConstraints(min_length=1, max_length=20_000)] = Field(
        description="The note, as the user said it; an atom at once, searchable on return."
    )
    type: Literal["persona", "episodic", "instruction"] | None = None
    metadata: dict[str, Any] | None = Field(None, description="A JSON object kept on the atom.")


class RecallIn(TenantBody):
    query: Annotated[str, StringConstraints(max_length=20_000)]
    session_key: Key | None = None


class BeforePromptIn(TenantBody):
    prompt: Annotated[str, StringConstraints(max_length=200_000)]
    session_key: Key = "default"
    transcript_length: Annotated[int, Field(ge=0, le=10**6)] | None = Field(
        None, description="Messages in the host's transcript before this prompt (enables position slicing)."
    )


class ContentPart(BaseModel):
    """An OpenAI-style content part; only ``text`` parts are kept."""

    model_config = ConfigDict(extra="allow")
    type: Annotated[str, StringConstraints(max_length=100)]
    text: str | None = None


class TurnMessageIn(Body):
    """A transcript message as hosts send it: any role (only user/assistant are stored), text or
    content parts, a timestamp in epoch ms or ISO 8601."""

    model_config = ConfigDict(extra="ignore")
    role: Annotated[str, StringConstraints(min_length=1, max_length=50)]
    content: Annotated[str, StringConstraints(max_length=200_000)] | list[ContentPart] = ""
    id: Id | None = None
    name: Annotated[str, StringConstraints(max_length=200)] | None = None
    timestamp: Millis | Annotated[str, StringConstraints(max_length=64)] | None = None


class TurnCommittedIn(TenantBody):
    messages: Annotated[list[TurnMessageIn], Field(max_length=MAX_TRANSCRIPT)]
    session_key: Key = "default"
    session_id: Key | None = None


class SessionEndIn(TenantBody):
    session_key: Key = "default"


class SearchIn(TenantBody):
    query: Annotated[str, StringConstraints(max_length=20_000)]
    limit: Limit = 10
    layers: Annotated[list[Literal["L0", "L1"]], Field(min_length=1, max_length=2)] = Field(
        default_factory=lambda: [cast(Literal["L0", "L1"], str(x)) for x in DEFAULT_LAYERS]
    )
    mode: Literal["hybrid", "keyword", "vector"] = "hybrid"
    min_score: MinScore = None
    type: Literal["persona", "episodic", "instruction"] | None = None
    scene: Annotated[str, StringConstraints(max_length=200)] | None = None
    session_key: Key | None = None
    since: Millis | None = None
    until: Millis | None = None
    include_superseded: bool = False


class ConversationSearchIn(TenantBody):
    query: Annotated[str, StringConstraints(max_length=20_000)]
    limit: Limit = 10
    session_key: Key | None = None
    mode: Literal["hybrid", "keyword", "vector"] = "hybrid"
    since: Millis | None = None
    until: Millis | None = None
    min_score: MinScore = None


class DeleteMessagesIn(TenantBody):
    ids: Annotated[list[Id], Field(max_length=MAX_IDS)] = []
    session_keys: Annotated[list[Key], Field(max_length=100)] = []


class DeleteAtomsIn(TenantBody):
    ids: Annotated[list[Id], Field(min_length=1, max_length=MAX_IDS)]


class AtomPatchIn(TenantBody):
    content: Annotated[str, StringConstraints(min_length=1, max_length=20_000)] | None = None
    type: Literal["persona", "episodic", "instruction"] | None = None
    priority: Annotated[int, Field(ge=-1, le=100)] | None = None
    scene_name: Annotated[str, StringConstraints(max_length=200)] | None = None
    follow: bool = Field(False, description="Edit the current version when this one was superseded.")


class SceneIn(TenantBody):
    content: Annotated[str, StringConstraints(min_length=1, max_length=500_000)] = Field(
        description="The Markdown body (a whole scene file with its META block is accepted too)."
    )
    summary: Annotated[str, StringConstraints(max_length=2_000)] | None = None
    create: bool = True


class PersonaIn(TenantBody):
    body: Annotated[str, StringConstraints(min_length=1, max_length=500_000)]


class PersonaRequestIn(TenantBody):
    reason: Annotated[str, StringConstraints(max_length=500)] = "explicit request"


class ImportIn(TenantBody):
    data: dict[str, Any] | list[Any] = Field(
        description='Seed history: {"sessions": [...]} or [...] (see docs/http-api.md).'
    )
    process: bool = Field(False, description="Run L1 on each imported session before answering.")


class EmptyIn(Body):
    pass


class PinIn(TenantBody):
    pinned: bool = True


class TtlIn(TenantBody):
    """``expires_at`` (epoch ms or ISO 8601) or ``ttl_seconds`` from now; neither clears it."""

    expires_at: Millis | Annotated[str, StringConstraints(max_length=64)] | None = None
    ttl_seconds: Annotated[float, Field(gt=0, le=10**11)] | None = None
