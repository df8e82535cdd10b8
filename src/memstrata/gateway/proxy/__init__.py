"""The LLM proxy: memory for agents that speak the OpenAI or Anthropic API, behind a base-URL
change (docs/proxy.md).

``routes`` maps the paths; ``exchange`` runs one request (auth, recall, inject, forward,
capture); ``auth`` reads keys in the two auth modes; ``openai_chat``, ``openai_responses`` and
``anthropic_messages`` are the wire formats (``dialect`` their shared shapes); ``session`` names
the memstrata session; ``injection`` bounds what goes in; ``capture`` decides what is stored;
``sse`` and ``stream`` forward streamed answers event by event; ``upstream`` is the client;
``settings``, ``state``, ``stats`` and ``limits`` hold the rest. Memory is only reached through
the facade (``before_prompt``, ``turn_committed``).
"""

from memstrata.gateway.proxy.limits import BodyLimits
from memstrata.gateway.proxy.routes import router
from memstrata.gateway.proxy.state import ProxyState
from memstrata.gateway.proxy.stats import ProxyStats

__all__ = ["BodyLimits", "ProxyState", "ProxyStats", "router"]
