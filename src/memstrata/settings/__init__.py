"""Settings: defaults < TOML file < environment (``MEMSTRATA_`` prefix, ``__`` for nesting) < arguments.

The TOML file is ``$MEMSTRATA_CONFIG``, else ``memstrata.toml`` in the data directory being opened.
A key of the file or a ``MEMSTRATA_`` variable that names no setting is a ``ConfigError`` naming
the nearest valid name (a misspelling must not quietly leave the default in force); so is a value
of the wrong type. This is the only module that reads the environment. Edges load ``Settings``
once and pass it on.

    MEMSTRATA_HOME=/data/mem  MEMSTRATA_EMBEDDING__PROVIDER=hashing  MEMSTRATA_LLM__BASE_URL=...
    MEMSTRATA_STORE__URL=postgresql://memstrata@db.internal/memstrata
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping, Sequence
from functools import cache
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, SecretStr, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from memstrata.errors import ConfigError
from memstrata.settings.sections import (
    CaptureSettings,
    EmbeddingSettings,
    LLMSettings,
    PersonaSettings,
    PipelineSettings,
    ProxySettings,
    RecallSettings,
    RetentionSettings,
    SearchSettings,
    ServerSettings,
    StoreSettings,
    TurnSettings,
)

__all__ = [
    "ENV_PREFIX",
    "OTHER_VARIABLES",
    "CaptureSettings",
    "EmbeddingSettings",
    "LLMSettings",
    "PersonaSettings",
    "PipelineSettings",
    "ProxySettings",
    "RecallSettings",
    "RetentionSettings",
    "SearchSettings",
    "ServerSettings",
    "Settings",
    "StoreSettings",
    "TurnSettings",
    "check_environment",
    "env_name",
    "load_settings",
    "setting_names",
    "settings_file",
    "unknown_setting",
]

ENV_PREFIX = "MEMSTRATA_"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid")

    home: Path = Field(default_factory=lambda: Path("~/.memstrata").expanduser())
    store: StoreSettings = Field(default_factory=StoreSettings)
    capture: CaptureSettings = Field(default_factory=CaptureSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    pipeline: PipelineSettings = Field(default_factory=PipelineSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    persona: PersonaSettings = Field(default_factory=PersonaSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    turns: TurnSettings = Field(default_factory=TurnSettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    proxy: ProxySettings = Field(default_factory=ProxySettings)
    # The bearer token of the HTTP gateway (``MEMSTRATA_API_KEY``); required off loopback.
    api_key: SecretStr | None = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        check_environment(os.environ)
        home = getattr(init_settings, "init_kwargs", {}).get("home")
        return (init_settings, env_settings, _TomlFile(settings_cls, settings_file(home)))


# Variables with the prefix that are not settings.
OTHER_VARIABLES = frozenset(
    {
        "MEMSTRATA_CONFIG",  # the settings file, when not <home>/memstrata.toml
        "MEMSTRATA_URL",  # the CLI's --url: a server to go through
    }
)


def settings_file(home: str | Path | None) -> Path:
    """``$MEMSTRATA_CONFIG``, else ``memstrata.toml`` in the data directory (``home``, else
    ``$MEMSTRATA_HOME``, else ``~/.memstrata``). It need not exist."""
    if config := os.environ.get("MEMSTRATA_CONFIG"):
        return Path(config).expanduser()
    return Path(home or os.environ.get("MEMSTRATA_HOME") or "~/.memstrata").expanduser() / "memstrata.toml"


class _TomlFile(TomlConfigSettingsSource):
    """pydantic-settings' TOML source; unreadable files and unknown keys are a ``ConfigError``."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        self.path = path
        super().__init__(settings_cls, toml_file=path)
        for key in _dotted_keys(self.toml_data):
            if key not in setting_names():
                raise ConfigError(f"{path}: {unknown_setting(key, setting_names())}")

    def _read_file(self, file_path: Path | Traversable) -> dict[str, Any]:
        try:
            return super()._read_file(file_path)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read settings file {file_path}: {exc}") from exc


def _dotted_keys(data: Mapping[str, Any]) -> list[str]:
    """``{"pipeline": {"engine": ...}, "home": ...}`` -> ``["pipeline.engine", "home"]``."""
    keys = []
    for key, value in data.items():
        if isinstance(value, Mapping) and key in Settings.model_fields:
            keys += [f"{key}.{sub}" for sub in value]
        else:
            keys.append(key)
    return keys


@cache
def setting_names() -> tuple[str, ...]:
    """Every setting by its dotted name: ``home``, ``pipeline``, ``pipeline.engine``, ..."""
    names: list[str] = []
    for name, field in Settings.model_fields.items():
        names.append(name)
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            names += [f"{name}.{sub}" for sub in field.annotation.model_fields]
    return tuple(names)


def env_name(dotted: str) -> str:
    """``pipeline.engine`` -> ``MEMSTRATA_PIPELINE__ENGINE``."""
    return ENV_PREFIX + dotted.replace(".", "__").upper()


def check_environment(environ: Mapping[str, str]) -> None:
    """Refuse a ``MEMSTRATA_`` variable that names no setting (a misspelt one would otherwise be
    ignored without a word), naming the nearest valid one."""
    valid = {env_name(n) for n in setting_names()} | OTHER_VARIABLES
    for key in sorted(environ):
        if key.upper().startswith(ENV_PREFIX) and key.upper() not in valid:
            raise ConfigError(f"environment variable {unknown_setting(key, sorted(valid))}")


def unknown_setting(name: str, valid: Sequence[str]) -> str:
    """``'X' is not a setting; did you mean 'Y'?`` (the nearest valid name, when one is close)."""

    def bare(n: str) -> str:
        return n.upper().removeprefix(ENV_PREFIX).lower()

    by_bare = {bare(v): v for v in valid}
    near = difflib.get_close_matches(bare(name), list(by_bare), n=1, cutoff=0.6)
    hint = f"; did you mean {by_bare[near[0]]!r}?" if near else " (see the configuration table of the README)"
    return f"{name!r} is not a setting{hint}"


def load_settings(home: str | Path | None = None, **overrides: Any) -> Settings:
    """Settings for a data directory: arguments (``overrides``) over the environment over
    ``<home>/memstrata.toml`` over defaults. Raises ``ConfigError`` for an unknown setting or an
    invalid value, naming it."""
    if home is not None:
        overrides["home"] = Path(home).expanduser()
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        name = ".".join(str(part) for part in first["loc"])
        if first["type"] == "extra_forbidden":
            raise ConfigError(unknown_setting(name, setting_names())) from None
        raise ConfigError(f"invalid setting {name}: {first['msg']} (got {first.get('input')!r})") from None
