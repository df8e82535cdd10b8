"""Settings: defaults < TOML file < environment (``MEMSTRATA_`` prefix, ``__`` for nesting) < arguments.

This is the only module that reads the environment. Edges load ``Settings`` once and pass it on.

    MEMSTRATA_HOME=/data/mem  MEMSTRATA_EMBEDDING__PROVIDER=hashing  MEMSTRATA_LLM__BASE_URL=...
    MEMSTRATA_STORE__URL=postgresql://memstrata@db.internal/memstrata
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from memstrata.errors import ConfigError


class EmbeddingSettings(BaseModel):
    # auto: a configured endpoint, else an installed local model, else none (keyword search only)
    provider: Literal["auto", "none", "hashing", "sentence-transformers", "openai"] = "auto"
    model: str = ""  # sentence-transformers name or path; model name for an endpoint
    base_url: str = ""
    api_key: str = ""
    dimensions: int | None = None
    timeout_seconds: float = 30.0
    batch_size: int | None = None  # None: the adapter's default (16 local: less padding on CPU; 64 HTTP)


class CaptureSettings(BaseModel):
    # A longer message is stored cut to this many characters, with a note saying so (and the
    # capture result reports it). Keeps one pasted log or file from costing gigabytes downstream.
    max_message_chars: Annotated[int, Field(ge=1000)] = 200_000


class LLMSettings(BaseModel):
    base_url: str = ""
    api_key: str = ""
    model: str = ""
    timeout_seconds: float = 60.0
    max_tokens: int = 4096
    json_mode: bool = True


class PipelineSettings(BaseModel):
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


class PersonaSettings(BaseModel):
    max_scenes: Annotated[int, Field(ge=2)] = 15
    trigger_every_n: Annotated[int, Field(ge=1)] = 50  # new atoms since the last persona
    scene_backup_count: Annotated[int, Field(ge=1)] = 10
    backup_count: Annotated[int, Field(ge=1)] = 3
    # The sandboxed tool loop of the llm engine (L2 and L3).
    tool_max_steps: Annotated[int, Field(ge=1)] = 20
    tool_timeout_seconds: float = 300.0
    tool_max_write_bytes: Annotated[int, Field(ge=1024)] = 256 * 1024


class RecallSettings(BaseModel):
    timeout_ms: Annotated[int, Field(ge=1)] = 5000  # return what is ready by then, with a reason
    max_results: Annotated[int, Field(ge=1, le=50)] = 5
    memory_chars: Annotated[int, Field(ge=40)] = 400  # one memory line
    memories_chars: Annotated[int, Field(ge=40)] = 2000  # all memory lines
    persona_chars: Annotated[int, Field(ge=40)] = 4000
    navigation_chars: Annotated[int, Field(ge=40)] = 2000


class SearchSettings(BaseModel):
    # 60 in the design source; a small k ranks by the best list position and measured better on
    # LoCoMo (bench/locomo_recall.py: R@10 78.5 at k=10 vs 76.3 at k=60, both with diversify).
    rrf_k: Annotated[float, Field(gt=0)] = 10.0
    candidates: Annotated[int, Field(ge=1)] = 100  # per-list depth before fusion
    context_previous: bool = True  # index each message with the one before it


class StoreSettings(BaseModel):
    # Where memory lives when no path or URL is given to open(): a PostgreSQL URL
    # (postgresql://user:password@host:port/database) or a data directory; empty: ``home``.
    url: str = ""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMSTRATA_", env_nested_delimiter="__", extra="forbid")

    home: Path = Field(default_factory=lambda: Path("~/.memstrata").expanduser())
    store: StoreSettings = Field(default_factory=StoreSettings)
    capture: CaptureSettings = Field(default_factory=CaptureSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    pipeline: PipelineSettings = Field(default_factory=PipelineSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    persona: PersonaSettings = Field(default_factory=PersonaSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _TomlSource(settings_cls))


class _TomlSource(PydanticBaseSettingsSource):
    """``$MEMSTRATA_CONFIG``, else ``<home>/memstrata.toml`` when it exists."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = os.environ.get("MEMSTRATA_CONFIG")
        if not path:
            home = Path(os.environ.get("MEMSTRATA_HOME", "~/.memstrata")).expanduser()
            candidate = home / "memstrata.toml"
            if not candidate.is_file():
                return {}
            path = str(candidate)
        try:
            with open(path, "rb") as fh:
                return tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read settings file {path}: {exc}") from exc


def load_settings(home: str | Path | None = None, **overrides: Any) -> Settings:
    """Settings for a data directory; keyword overrides win over file and environment."""
    if home is not None:
        overrides["home"] = Path(home).expanduser()
    return Settings(**overrides)
