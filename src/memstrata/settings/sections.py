"""The settings of each area (``Settings`` holds one of each: ``settings.pipeline`` ...), with their
defaults and bounds; an out-of-bound or misspelt value is refused when the settings load."""

from __future__ import annotations

from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator


class _Section(BaseModel):
    # A misspelt key in the file or in arguments is an error, never silently a default.
    model_config = ConfigDict(extra="forbid")


class EmbeddingSettings(_Section):
    # auto: a configured endpoint, else the shipped local MiniLM (numpy, no torch; with the
    # multilingual extra, e5 for a store whose first messages are mostly Chinese), else
    # sentence-transformers when installed, else none (keyword search only)
    provider: Literal[
        "auto", "none", "hashing", "local", "multilingual", "sentence-transformers", "openai"
    ] = "auto"
    model: str = ""  # sentence-transformers name or path; model name for an endpoint
    base_url: str = ""
    api_key: str = ""
    dimensions: int | None = None
    timeout_seconds: float = 30.0
    # None: the adapter's default (16 sentence-transformers, 64 HTTP); the shipped local model
    # groups texts by length itself and ignores it
    batch_size: int | None = None
    # The shipped local model's search queries in a child process of their own, away from a busy
    # server's GIL (embeddings/query_process.py). None: on for `memstrata serve`, off elsewhere.
    query_process: bool | None = None


class CaptureSettings(_Section):
    # A longer message is stored cut to this many characters, with a note saying so (and the
    # capture result reports it). Keeps one pasted log or file from costing gigabytes downstream.
    max_message_chars: Annotated[int, Field(ge=1000)] = 200_000
    # L0 retention: messages said more than this many days ago are deleted by the daily sweep
    # (None: kept for ever). Never the session's newest ``retention_keep_last`` messages, and
    # never a message L1 has not extracted yet; the atoms taken from a swept message keep their
    # text and say so (``metadata.sources_swept``).
    retention_days: Annotated[float | None, Field(gt=0)] = None
    retention_keep_last: Annotated[int, Field(ge=0)] = 20


class RetentionSettings(_Section):
    """The daily sweep: L0 retention (``capture.retention_days``), L1 retention, expired atoms."""

    # L1 retention: unpinned atoms (and old versions) not updated for this many days are deleted
    # by the sweep (None: kept for ever). Expired atoms (``expires_at``) are deleted in any case.
    atoms_days: Annotated[float | None, Field(gt=0)] = None
    sweep_at: Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")] = "03:30"  # local time
    timezone: str = ""  # an IANA name such as Europe/Paris; empty: the machine's local time

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        if value:
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(
                    f"unknown time zone {value!r} (use an IANA name like Europe/Paris)"
                ) from None
        return value


class LLMSettings(_Section):
    base_url: str = ""
    api_key: str = ""
    model: str = ""
    timeout_seconds: float = 60.0
    max_tokens: int = 4096
    json_mode: bool = True  # False: never send response_format (as structured_output "off")
    # "auto" probes json_schema, then json_object, then nothing, once per endpoint (docs/llm.md).
    structured_output: Literal["auto", "json_schema", "json_object", "off"] = "auto"
    # "auto": the server's tool calling, the JSON action protocol once the server refuses tools.
    tool_calling: Literal["auto", "native", "json"] = "auto"
    retries: Annotated[int, Field(ge=0)] = 2  # per call, on timeouts, lost connections, 429, 5xx
    retry_backoff_seconds: Annotated[float, Field(ge=0)] = 1.0  # doubled after each retry
    concurrency: Annotated[int, Field(ge=0)] = 0  # requests in flight; 0 no cap (one-slot servers: 1)
    # The largest max_tokens a truncated reply (finish_reason "length") is retried with.
    max_tokens_cap: Annotated[int, Field(ge=1)] = 8192


class PipelineSettings(_Section):
    engine: Literal["offline", "llm"] = "offline"
    every_n_conversations: Annotated[int, Field(ge=1)] = 5
    warm_up: bool = True
    l1_idle_timeout_seconds: float = 600.0
    window_size: Annotated[int, Field(ge=1)] = 10
    background_size: Annotated[int, Field(ge=0)] = 5
    retry_delay_seconds: float = 30.0
    max_attempts: Annotated[int, Field(ge=1)] = 5
    workers: Annotated[int, Field(ge=1)] = 4
    # L2 timer per tenant (downward-only); see DESIGN section 4.
    l2_delay_after_l1_seconds: float = 10.0
    l2_min_interval_seconds: float = 900.0
    l2_max_interval_seconds: float = 3600.0
    session_active_window_hours: float = 24.0
    l2_batch_size: Annotated[int, Field(ge=1)] = 50  # atoms per consolidation call


class PersonaSettings(_Section):
    # The persona body: a profile, not a log. 800 measured best with recall.persona_chars 800 once
    # every fact is dated (docs/benchmarks.md): the body must fit its share of the recall budget to
    # be shown whole.
    max_chars: Annotated[int, Field(ge=200)] = 800
    max_scenes: Annotated[int, Field(ge=2)] = 15
    trigger_every_n: Annotated[int, Field(ge=1)] = 50  # new atoms since the last persona
    scene_backup_count: Annotated[int, Field(ge=1)] = 10
    backup_count: Annotated[int, Field(ge=1)] = 3
    # The sandboxed tool loop of the llm engine (L2 and L3).
    tool_max_steps: Annotated[int, Field(ge=1)] = 20
    tool_timeout_seconds: float = 300.0
    tool_max_write_bytes: Annotated[int, Field(ge=1024)] = 256 * 1024


class RecallSettings(_Section):
    """One character budget for everything recall injects, and the shares inside it (the defaults
    measured best on the LoCoMo dev set: docs/benchmarks.md)."""

    timeout_ms: Annotated[int, Field(ge=1)] = 5000  # return what is ready by then, with a reason
    total_chars: Annotated[int, Field(ge=400)] = 4000  # system_context + prepend_context
    persona_chars: Annotated[int, Field(ge=0)] = 800  # the persona's share at most
    navigation_chars: Annotated[int, Field(ge=0)] = 300  # the scene navigation's share at most
    line_chars: Annotated[int, Field(ge=40)] = 300  # one memory line at most
    excerpt_chars: Annotated[int, Field(ge=0)] = 0  # a scene excerpt at most (0: never)
    candidates: Annotated[int, Field(ge=1, le=200)] = 30  # search hits considered for the memories
    # Recall fuses as search did before issue 49's agreement weights: RRF k 10, lists 100 deep,
    # each keyword list at ``search.keyword_weight``. It fills a character budget with its
    # ``candidates`` (about 30 lines), where the first places matter less than what the whole set
    # holds: on LoCoMo dev (context_check.py) search's fusion (k 5, agreement) gave 76.9 %
    # answer-token recall against 77.5 % with this (k 10 with agreement 77.1, k 5 without 77.2;
    # lists 200 deep 77.3), and PrefEval's recall held the preference in 98.0 % either way. It
    # fuses each record on its own, without the instructions' list: search's finding fusion
    # (``fusion.finding_rrf``) gave 77.1 % here (k 10, static weights).
    rrf_k: Annotated[float, Field(gt=0)] = 10.0
    depth: Annotated[int, Field(ge=1)] = 100  # per-list depth before fusion


class SearchSettings(_Section):
    # 60 in the design source; a small k ranks by the best list position. 5 was chosen in all 111
    # folds of bench/fusion_loo.py (leave-one-conversation-out over LoCoMo, BEAM and PrefEval dev,
    # with each keyword list weighed by its agreement: retrieval/fusion.py; docs/benchmarks.md).
    rrf_k: Annotated[float, Field(gt=0)] = 5.0
    candidates: Annotated[int, Field(ge=1)] = (
        200  # per-list depth before fusion (bench/fusion_loo.py: 107 of 111 folds)
    )
    keyword_weight: Annotated[float, Field(ge=0)] = 1.0  # a keyword list's RRF weight (a vector list's: 1)
    # The relevance floor of search and recall when a call names none, in two parts, both chosen
    # leave-one-conversation-out on the LoCoMo dev set (bench/relevance_floor.py, docs/benchmarks.md):
    # a query none of whose hits reaches ``query_floor`` is about nothing stored and finds nothing;
    # the hits of a query that does find something are kept down to ``min_score``. One floor for
    # both cut on-topic questions' evidence (R@1000tok 88.7 against 88.8 with no floor).
    query_floor: Annotated[float, Field(ge=0, le=1)] = 0.22
    min_score: Annotated[float, Field(ge=0, le=1)] = 0.07
    # A standing preference or instruction (a persona or instruction atom) among a request's
    # candidates is a finding of a request of the user's own (the language pack's ``request``:
    # "what would you recommend for me?") when its cosine with the request reaches this, though
    # it holds none of its words and its relevance is under both floors (issue 49: PrefEval's
    # requests). -1: whatever its cosine; 1 and above: never. Chosen leave-one-conversation-out
    # on the three dev sets (bench/standing_floor.py: -1 in all 111 folds; docs/benchmarks.md).
    standing_floor: Annotated[float, Field(ge=-1, le=2)] = -1.0
    context_previous: bool = True  # index each message with the one before it


class StoreSettings(_Section):
    # Where memory lives when no path or URL is given to open(): a PostgreSQL URL
    # (postgresql://user:password@host:port/database) or a data directory; empty: ``home``.
    url: str = ""


class ServerSettings(_Section):
    """``memstrata serve``: where it listens and what it accepts."""

    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 8420
    max_body_bytes: Annotated[int, Field(ge=1024)] = 1024 * 1024  # larger bodies get 413
    mcp: bool = True  # mount the MCP server (streamable HTTP) at /mcp
    # On SIGTERM: requests in flight, then the L1 drain, get this long in all; what does not fit
    # stays in the durable backlog for the next start (common orchestrator grace: 10-30 s).
    shutdown_grace_seconds: Annotated[float, Field(gt=0)] = 10.0
    # Each request (headers and body) must arrive within this long, or the connection is closed.
    request_read_timeout_seconds: Annotated[float, Field(gt=0)] = 30.0
    max_connections: Annotated[int, Field(ge=2)] = 1000  # past it, requests get 503
    # A connection must carry a complete, authenticated request this soon after it opens, or it is
    # closed; connections still waiting for one are at most max_connections - reserved_connections
    # (one more closes the oldest), so clients with a key always find room (gateway.admission).
    authenticate_within_seconds: Annotated[float, Field(gt=0)] = 5.0
    reserved_connections: Annotated[int, Field(ge=1)] = 100
    # Bad keys from one client answered at once (within a minute of each other); past them, each
    # failure makes that client wait before its next unknown key is checked (gateway.throttle).
    free_key_failures: Annotated[int, Field(ge=0)] = 10
    # Worker processes `serve` starts for the pipeline (0: `memstrata worker` runs elsewhere), and
    # how much lower their CPU priority is than the server's (nice), so requests go first.
    workers: Annotated[int, Field(ge=0)] = 1
    worker_nice: Annotated[int, Field(ge=0, le=19)] = 10
    # How long end_session, run_all and an import with process wait for the workers to do what
    # they were handed (under the HTTP client's 30 s read timeout); then 503 `not_done`, nothing
    # lost: the work stays marked due in the store, and a retry waits again.
    pipeline_wait_seconds: Annotated[float, Field(gt=0)] = 25.0


class TurnSettings(_Section):
    """The host turn lifecycle (``before_prompt`` / ``turn_committed``)."""

    # Extra regular expressions whose matches are cut out of host messages (e.g. a host's own
    # reply directives); the built-in noise rules always apply.
    noise_patterns: list[str] = Field(default_factory=list)
    cache_sessions: Annotated[int, Field(ge=1)] = 10_000  # sessions whose before_prompt is remembered
    cache_ttl_seconds: Annotated[float, Field(gt=0)] = 6 * 3600


class ProxySettings(_Section):
    """The LLM proxy under ``/proxy/`` (docs/proxy.md). A provider whose key is set here runs in
    gateway mode (clients present memstrata keys; memstrata holds the provider key); without
    one, in pass-through mode (the client's provider key goes upstream unchanged)."""

    # Any OpenAI-compatible server will do (vLLM, llama.cpp, Ollama): its URL up to and with /v1.
    openai_url: str = "https://api.openai.com/v1"
    anthropic_url: str = "https://api.anthropic.com"  # up to, not with, /v1
    openai_api_key: SecretStr | None = None
    anthropic_api_key: SecretStr | None = None
    # The query-dependent memories put before the latest user turn, at most (tags included):
    # ~400 tokens, so with the persona and scene navigation (recall.persona_chars and
    # recall.navigation_chars) a turn costs well under 1,000 tokens.
    memory_chars: Annotated[int, Field(ge=0)] = 1600
    # The model call waits this long for recall at most, then goes upstream without memories
    # (counted): the first token is never later than this for memory's sake. Recall's p95 on a
    # busy 2-core machine is 15-100 ms (docs/benchmarks.md); recall.timeout_ms applies inside it.
    recall_timeout_ms: Annotated[int, Field(ge=1)] = 150
    capture_tools: bool = False  # store tool calls and tool results as conversation
    tool_chars: Annotated[int, Field(ge=40)] = 2000  # one stored tool call or result at most
    # Extra regular expressions: a request whose system prompt or latest user text matches one
    # is auxiliary (no recall, no capture), like the built-in title and summary requests.
    auxiliary_patterns: list[str] = Field(default_factory=list)
    connect_timeout_seconds: Annotated[float, Field(gt=0)] = 10.0
    read_timeout_seconds: Annotated[float, Field(gt=0)] = 600.0  # between two bytes of an answer
    max_body_bytes: Annotated[int, Field(ge=1024)] = 32 * 1024 * 1024  # agents send whole transcripts
