"""memstrata: layered long-term memory for LLM agents."""
