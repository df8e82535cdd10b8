"""LangGraph adapters (``memstrata[langgraph]``): ``MemstrataStore``, a ``BaseStore`` whose items
are memstrata atoms, and ``MemoryNodes``, graph nodes that recall for the latest human message
and capture the turn."""

from memstrata.integrations.langgraph.nodes import MemoryNodes
from memstrata.integrations.langgraph.store import MemstrataStore

__all__ = ["MemoryNodes", "MemstrataStore"]
