"""The proxy's settings, read once (``proxy.*`` of ``memstrata.settings``, ``MEMSTRATA_PROXY__*``)
into what a request needs: each provider's upstream and auth mode, the tool policy and the
auxiliary patterns."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import SecretStr

from memstrata.gateway.proxy.capture import patterns
from memstrata.gateway.proxy.dialect import ToolPolicy
from memstrata.settings import Settings


@dataclass(frozen=True, slots=True)
class Provider:
    """One upstream: ``family`` ("openai" or "anthropic"), its base URL, and the provider key
    memstrata holds (gateway mode) or None (pass-through mode)."""

    family: str
    base_url: str
    key: SecretStr | None

    @property
    def mode(self) -> str:
        return "gateway" if self.key is not None else "pass-through"


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    openai: Provider
    anthropic: Provider
    tools: ToolPolicy
    auxiliary: tuple[re.Pattern[str], ...]

    @classmethod
    def of(cls, settings: Settings) -> ProxyConfig:
        p = settings.proxy
        return cls(
            Provider("openai", p.openai_url, p.openai_api_key),
            Provider("anthropic", p.anthropic_url, p.anthropic_api_key),
            ToolPolicy(p.capture_tools, p.tool_chars),
            patterns(p.auxiliary_patterns),
        )
