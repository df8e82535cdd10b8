"""Embedder adapters: ``hashing`` (no dependencies), ``sentence_transformers`` (local, lazy) and
``openai_compat`` (an HTTP endpoint); ``select.embedder_from_settings`` picks one from settings."""
