"""Embedder adapters: ``local`` (the shipped all-MiniLM-L6-v2, int8, run by numpy: the default),
``hashing`` (no model), ``sentence_transformers`` (other local models, lazy, needs torch) and
``openai_compat`` (an HTTP endpoint), ``e5`` (multilingual-e5-small, an extra);
``select.embedder_from_settings`` picks one from settings (for ``auto`` with both local models,
``select.ByScript`` picks per store by its first messages); ``query_process`` runs a server's
query passes of the shipped model in a child process (``query_child``), and its background
batches in another at the lowest CPU priority."""
